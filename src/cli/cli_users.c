/* cli_users.c: `weir users ...` and `weir tokens ...` (cli_users.h): flags
 * read and checked here (a bad one named before any call), the server
 * asked, its answer printed. */
#include "cli/cli_users.h"

#include <stdlib.h>
#include <string.h>

#include "api/basic_auth.h"
#include "api/person_token.h"
#include "lib/http_client.h"
#include "model/duration.h"
#include "model/role.h"

#define CALL_TIMEOUT_MS 30000

void cli_users_usage(FILE *out)
{
	fputs("usage: weir users create --username U --role R [--password P] [--email E]\n"
	      "                         [--firstname F] [--lastname L]\n"
	      "       weir users list [-o table|json]\n"
	      "       weir users delete --username U\n"
	      "       weir users reset-password --username U [--password P]\n"
	      "       weir users set-role --username U --role R\n"
	      "\n"
	      "The users kept in the server's store, beside those of its configuration\n"
	      "(users: in weir.yaml, which win over a name in both and are changed there).\n"
	      "Needs the Admin role.\n"
	      "\n"
	      "  create          a new user; R is Viewer, User, Op or Admin\n"
	      "                  (docs/security.md, \"Roles\")\n"
	      "  list            every user: name, role, e-mail, where it is kept\n"
	      "  delete          removes a user of the store and revokes its tokens\n"
	      "  reset-password  a new password\n"
	      "  set-role        a new role, from the user's next request on\n"
	      "\n"
	      "  --username, -u U  1 to 60 letters, digits and . _ - @\n"
	      "  --role, -r R      Viewer, User, Op or Admin\n"
	      "  --password, -p P  the password; without it, the first line of standard\n"
	      "                    input is (printf '%s\\n' \"$PW\" | weir users create ...)\n"
	      "  --email, -e E     the user's e-mail address\n"
	      "  --firstname, -f / --lastname, -l  accepted, as Airflow's; not kept\n"
	      "\n"
	      "The password is hashed here (PBKDF2, as weir hash-password): only its hash\n"
	      "reaches the server.  exit status: 0 done, 1 the server refused (404: no such\n"
	      "user, 409: the name exists, or is the configuration's), 2 bad input, 3 the\n"
	      "server is unreachable.  See docs/security.md.\n",
	      out);
}

void cli_tokens_usage(FILE *out)
{
	fputs("usage: weir tokens create --user U --name N [--expires DURATION]\n"
	      "       weir tokens list [-o table|json]\n"
	      "       weir tokens revoke NAME\n"
	      "\n"
	      "API tokens that act as a user, for a person or a script: a request with\n"
	      "\"Authorization: Bearer TOKEN\" (or WEIR_TOKEN=TOKEN for the CLI and the\n"
	      "Python package) has that user's role, and the event log names the user and\n"
	      "the token's name.  Needs the Admin role.\n"
	      "\n"
	      "  create  prints the new token on standard output, the one time it is shown\n"
	      "          (the server keeps only its SHA-256); N names it (1 to 60 letters,\n"
	      "          digits and . _ - @, unique); --expires: refused after DURATION\n"
	      "          (s, m, h, d: \"90d\", \"12h\"; at most a year); without it, never\n"
	      "  list    every token: name, user, state (active, expired, revoked), times;\n"
	      "          never the token\n"
	      "  revoke  refused from the next request on\n"
	      "\n"
	      "exit status: 0 done, 1 the server refused (404: no such user or token, 409:\n"
	      "the name exists), 2 bad input, 3 the server is unreachable.  See\n"
	      "docs/security.md.\n",
	      out);
}

/* ---- shared ---- */

/* METHOD path with `body` (NULL: none; stolen); *out (NULL: not wanted) the
 * answer's JSON on 2xx.  The exit status. */
static int call(const struct cli_globals *g, const char *method, const char *path, json_t *body,
                json_t **out)
{
	struct weir_error err = {0};
	struct cli_ctx ctx = {0};
	struct cli_reply r = {0};
	char *text = body ? json_dumps(body, JSON_COMPACT) : NULL;
	int rc = CLI_EXIT_OK;

	json_decref(body);
	if (cli_ctx_init(&ctx, g, &err) < 0) {
		cli_error("%s", err.msg);
		free(text);
		return CLI_EXIT_USAGE;
	}
	if (cli_call(&ctx, method, path, text, CALL_TIMEOUT_MS, &r) < 0 || !cli_reply_ok(&r))
		rc = cli_report(&ctx, &r);
	else if (out)
		*out = json_incref(r.json);
	if (text)
		memset(text, 0, strlen(text));
	free(text);
	cli_reply_release(&r);
	cli_ctx_release(&ctx);
	return rc;
}

/* "/api/v1/weir/WHAT/NAME" with NAME escaped, or NULL (out of memory). */
static char *item_path(const char *what, const char *name)
{
	char *esc = http_url_escape(name), *p = NULL;

	if (esc && asprintf(&p, "/api/v1/weir/%s/%s", what, esc) < 0)
		p = NULL;
	free(esc);
	return p;
}

static int need(const char *value, const char *cmd, const char *flag, const char *expected,
                void (*usage)(FILE *))
{
	if (value)
		return 0;
	cli_error("%s: %s is required (%s)", cmd, flag, expected);
	usage(stderr);
	return -1;
}

static int check_name(const char *value, const char *cmd, const char *flag)
{
	struct weir_error err = {0};
	char what[64];

	snprintf(what, sizeof what, "%s %s", cmd, flag);
	if (person_name_check(value, what, &err) == 0)
		return 0;
	cli_error("%s", err.msg);
	return -1;
}

static int check_role(const char *value, const char *cmd, enum weir_role *role)
{
	if (role_from_name(value, role) == 0)
		return 0;
	cli_error("%s --role \"%s\": expected Viewer, User, Op or Admin", cmd, value);
	return -1;
}

/* The hash of --password, or of standard input's first line; NULL after
 * the error. */
static char *password_hash(const char *given, const char *cmd)
{
	struct weir_error err = {0};
	char line[4096], *hash = NULL;
	int rc;

	if (!given) {
		if (!fgets(line, sizeof line, stdin)) {
			cli_error("%s: expected --password or the password on standard input", cmd);
			return NULL;
		}
		line[strcspn(line, "\r\n")] = '\0';
		given = line;
	}
	if (!given[0]) {
		cli_error("%s: the password is empty", cmd);
		return NULL;
	}
	rc = basic_auth_hash_password(given, 0, &hash, &err);
	memset(line, 0, sizeof line);
	if (rc < 0) {
		cli_error("%s: %s", cmd, err.msg);
		return NULL;
	}
	return hash;
}

/* -o table|json: 0 with *json; -1 after the error. */
static int output_flag(const char *o, const char *cmd, bool *json)
{
	*json = o && !strcmp(o, "json");
	if (!o || *json || !strcmp(o, "table"))
		return 0;
	cli_error("%s -o \"%s\": expected table or json", cmd, o);
	return -1;
}

static void print_json(json_t *j)
{
	char *text = json_dumps(j, JSON_INDENT(2) | JSON_SORT_KEYS);

	if (text)
		printf("%s\n", text);
	free(text);
}

/* A table of `list`'s objects, the fields `keys` under `header`. */
static void print_table(json_t *list, const char *const *header, const char *const *keys,
                        size_t n_cols, const char *none)
{
	struct cli_table t;
	json_t *o;
	size_t i;

	if (json_array_size(list) == 0) {
		printf("%s\n", none);
		return;
	}
	if (cli_table_init(&t, n_cols, header) < 0)
		return;
	json_array_foreach(list, i, o)
	{
		const char *row[8];
		for (size_t k = 0; k < n_cols && k < 8; k++)
			row[k] = cli_json_str(o, keys[k], "-");
		cli_table_add(&t, row);
	}
	cli_table_print(&t, stdout);
	cli_table_release(&t);
}

/* ---- weir users ---- */

struct user_flags {
	const char *username, *role, *password, *email, *first, *last, *output;
};

/* The flags of a users subcommand; 0, 1 after --help, -1 after an error. */
static int user_flags(int argc, char **argv, struct cli_globals *g, struct user_flags *f)
{
	const struct cli_opt opts[] = {
	    {"--username", &f->username, NULL, NULL}, {"-u", &f->username, NULL, NULL},
	    {"--role", &f->role, NULL, NULL},         {"-r", &f->role, NULL, NULL},
	    {"--password", &f->password, NULL, NULL}, {"-p", &f->password, NULL, NULL},
	    {"--email", &f->email, NULL, NULL},       {"-e", &f->email, NULL, NULL},
	    {"--firstname", &f->first, NULL, NULL},   {"-f", &f->first, NULL, NULL},
	    {"--lastname", &f->last, NULL, NULL},     {"-l", &f->last, NULL, NULL},
	    {"--output", &f->output, NULL, NULL},     {"-o", &f->output, NULL, NULL},
	};
	size_t n_pos = 0;

	return cli_parse_args(argc, argv, opts, sizeof opts / sizeof opts[0], NULL, 0, &n_pos, g,
	                      cli_users_usage);
}

/* Whether only the flags `allowed` (a string of their names) were given. */
static int only_flags(const struct user_flags *f, const char *cmd, const char *allowed)
{
	const struct {
		const char *flag, *value;
	} all[] = {{"--role", f->role},       {"--password", f->password}, {"--email", f->email},
	           {"--firstname", f->first}, {"--lastname", f->last},     {"--output", f->output}};

	for (size_t i = 0; i < sizeof all / sizeof all[0]; i++)
		if (all[i].value && !strstr(allowed, all[i].flag)) {
			cli_error("%s: %s does not apply here (it takes %s)", cmd, all[i].flag,
			          allowed);
			return -1;
		}
	return 0;
}

static int users_list(const struct user_flags *f, const struct cli_globals *g)
{
	static const char *const header[] = {"USERNAME", "ROLE", "EMAIL", "SOURCE", "CREATED"};
	static const char *const keys[] = {"username", "role", "email", "source", "created"};
	json_t *answer = NULL;
	bool as_json;
	int rc;

	if (only_flags(f, "users list", "--output") < 0 ||
	    output_flag(f->output, "users list", &as_json) < 0)
		return CLI_EXIT_USAGE;
	if ((rc = call(g, "GET", "/api/v1/weir/users", NULL, &answer)) != CLI_EXIT_OK)
		return rc;
	if (as_json)
		print_json(json_object_get(answer, "users"));
	else
		print_table(json_object_get(answer, "users"), header, keys, 5, "no users");
	json_decref(answer);
	return CLI_EXIT_OK;
}

static int users_create(const struct user_flags *f, const struct cli_globals *g)
{
	const char *cmd = "users create";
	enum weir_role role;
	json_t *body;
	char *hash;
	int rc;

	if (only_flags(f, cmd, "--role --password --email --firstname --lastname") < 0 ||
	    need(f->username, cmd, "--username", "the new user's name", cli_users_usage) < 0 ||
	    check_name(f->username, cmd, "--username") < 0 ||
	    need(f->role, cmd, "--role", "Viewer, User, Op or Admin", cli_users_usage) < 0 ||
	    check_role(f->role, cmd, &role) < 0)
		return CLI_EXIT_USAGE;
	if (!(hash = password_hash(f->password, cmd)))
		return CLI_EXIT_USAGE;
	body = json_pack("{s:s, s:s, s:s}", "username", f->username, "role", role_name(role),
	                 "password_hash", hash);
	if (f->email)
		json_object_set_new(body, "email", json_string(f->email));
	free(hash);
	rc = call(g, "POST", "/api/v1/weir/users", body, NULL);
	if (rc == CLI_EXIT_OK)
		printf("user %s created (%s)\n", f->username, role_name(role));
	return rc;
}

static int users_change(const struct user_flags *f, const struct cli_globals *g, const char *cmd,
                        bool password)
{
	enum weir_role role = ROLE_NONE;
	json_t *body;
	char *path, *hash = NULL;
	int rc;

	if (only_flags(f, cmd, password ? "--password" : "--role") < 0 ||
	    need(f->username, cmd, "--username", "the user's name", cli_users_usage) < 0 ||
	    check_name(f->username, cmd, "--username") < 0)
		return CLI_EXIT_USAGE;
	if (!password &&
	    (need(f->role, cmd, "--role", "Viewer, User, Op or Admin", cli_users_usage) < 0 ||
	     check_role(f->role, cmd, &role) < 0))
		return CLI_EXIT_USAGE;
	if (password && !(hash = password_hash(f->password, cmd)))
		return CLI_EXIT_USAGE;
	body = password ? json_pack("{s:s}", "password_hash", hash)
	                : json_pack("{s:s}", "role", role_name(role));
	free(hash);
	if (!(path = item_path("users", f->username))) {
		json_decref(body);
		cli_error("out of memory");
		return CLI_EXIT_FAILED;
	}
	rc = call(g, "PATCH", path, body, NULL);
	free(path);
	if (rc == CLI_EXIT_OK && password)
		printf("password of %s reset\n", f->username);
	else if (rc == CLI_EXIT_OK)
		printf("user %s is now %s\n", f->username, role_name(role));
	return rc;
}

static int users_delete(const struct user_flags *f, const struct cli_globals *g)
{
	const char *cmd = "users delete";
	json_t *answer = NULL;
	char *path;
	int rc;

	if (only_flags(f, cmd, "") < 0 ||
	    need(f->username, cmd, "--username", "the user's name", cli_users_usage) < 0 ||
	    check_name(f->username, cmd, "--username") < 0)
		return CLI_EXIT_USAGE;
	if (!(path = item_path("users", f->username))) {
		cli_error("out of memory");
		return CLI_EXIT_FAILED;
	}
	rc = call(g, "DELETE", path, NULL, &answer);
	free(path);
	if (rc == CLI_EXIT_OK)
		printf("user %s deleted (%lld token(s) revoked)\n", f->username,
		       cli_json_int(answer, "tokens_revoked", 0));
	json_decref(answer);
	return rc;
}

int cli_users_main(int argc, char **argv, const struct cli_globals *g0)
{
	struct cli_globals g = *g0;
	struct user_flags f = {0};
	const char *sub = argc >= 2 ? argv[1] : NULL;
	int rc;

	if (sub && cli_flag_is_help(sub)) {
		cli_users_usage(stdout);
		return CLI_EXIT_OK;
	}
	if (!sub || (strcmp(sub, "create") && strcmp(sub, "list") && strcmp(sub, "delete") &&
	             strcmp(sub, "reset-password") && strcmp(sub, "set-role"))) {
		cli_error(sub ? "users: unknown subcommand \"%s\" (expected create, list, delete, "
		                "reset-password or set-role)"
		              : "users: a subcommand is needed%s",
		          sub ? sub : "");
		cli_users_usage(stderr);
		return CLI_EXIT_USAGE;
	}
	rc = user_flags(argc - 1, argv + 1, &g, &f);
	if (rc != 0)
		return rc > 0 ? CLI_EXIT_OK : CLI_EXIT_USAGE;
	if (!strcmp(sub, "create"))
		return users_create(&f, &g);
	if (!strcmp(sub, "list"))
		return users_list(&f, &g);
	if (!strcmp(sub, "delete"))
		return users_delete(&f, &g);
	return users_change(&f, &g,
	                    !strcmp(sub, "set-role") ? "users set-role" : "users reset-password",
	                    strcmp(sub, "set-role") != 0);
}

/* ---- weir tokens ---- */

static int tokens_create(int argc, char **argv, struct cli_globals *g)
{
	const char *cmd = "tokens create", *user = NULL, *name = NULL, *expires = NULL;
	const struct cli_opt opts[] = {{"--user", &user, NULL, NULL},
	                               {"--name", &name, NULL, NULL},
	                               {"--expires", &expires, NULL, NULL}};
	struct weir_error err = {0};
	json_t *body, *answer = NULL;
	int64_t s = 0;
	size_t n_pos = 0;
	int rc;

	rc = cli_parse_args(argc, argv, opts, 3, NULL, 0, &n_pos, g, cli_tokens_usage);
	if (rc != 0)
		return rc > 0 ? CLI_EXIT_OK : CLI_EXIT_USAGE;
	if (need(user, cmd, "--user", "the user the token acts as", cli_tokens_usage) < 0 ||
	    check_name(user, cmd, "--user") < 0 ||
	    need(name, cmd, "--name", "the token's name, e.g. ops-script", cli_tokens_usage) < 0 ||
	    check_name(name, cmd, "--name") < 0)
		return CLI_EXIT_USAGE;
	if (expires &&
	    (duration_parse_s(expires, "tokens create --expires", &s, &err) < 0 || s <= 0)) {
		cli_error("%s", err.msg[0]
		                    ? err.msg
		                    : "tokens create --expires: expected a duration above 0");
		return CLI_EXIT_USAGE;
	}
	body = json_pack("{s:s, s:s}", "user", user, "name", name);
	if (expires)
		json_object_set_new(body, "expires", json_string(expires));
	rc = call(g, "POST", "/api/v1/weir/tokens", body, &answer);
	if (rc == CLI_EXIT_OK) {
		printf("%s\n", cli_json_str(answer, "token", ""));
		fflush(stdout);
		fprintf(stderr,
		        "token %s for %s (expires %s): shown this once; the server keeps only its "
		        "hash\n",
		        name, user, cli_json_str(answer, "expires", "never"));
	}
	json_decref(answer);
	return rc;
}

static int tokens_list(int argc, char **argv, struct cli_globals *g)
{
	static const char *const header[] = {"NAME",    "USER",    "STATE",
	                                     "CREATED", "EXPIRES", "LAST USED"};
	static const char *const keys[] = {"name",    "user",    "state",
	                                   "created", "expires", "last_used"};
	const char *output = NULL;
	const struct cli_opt opts[] = {{"--output", &output, NULL, NULL},
	                               {"-o", &output, NULL, NULL}};
	json_t *answer = NULL;
	size_t n_pos = 0;
	bool as_json;
	int rc;

	rc = cli_parse_args(argc, argv, opts, 2, NULL, 0, &n_pos, g, cli_tokens_usage);
	if (rc != 0)
		return rc > 0 ? CLI_EXIT_OK : CLI_EXIT_USAGE;
	if (output_flag(output, "tokens list", &as_json) < 0)
		return CLI_EXIT_USAGE;
	if ((rc = call(g, "GET", "/api/v1/weir/tokens", NULL, &answer)) != CLI_EXIT_OK)
		return rc;
	if (as_json)
		print_json(json_object_get(answer, "tokens"));
	else
		print_table(json_object_get(answer, "tokens"), header, keys, 6, "no tokens");
	json_decref(answer);
	return CLI_EXIT_OK;
}

static int tokens_revoke(int argc, char **argv, struct cli_globals *g)
{
	const char *name = NULL;
	size_t n_pos = 0;
	char *path;
	int rc;

	rc = cli_parse_args(argc, argv, NULL, 0, &name, 1, &n_pos, g, cli_tokens_usage);
	if (rc != 0)
		return rc > 0 ? CLI_EXIT_OK : CLI_EXIT_USAGE;
	if (need(name, "tokens revoke", "NAME", "the token's name", cli_tokens_usage) < 0 ||
	    check_name(name, "tokens revoke", "NAME") < 0)
		return CLI_EXIT_USAGE;
	if (!(path = item_path("tokens", name))) {
		cli_error("out of memory");
		return CLI_EXIT_FAILED;
	}
	rc = call(g, "DELETE", path, NULL, NULL);
	free(path);
	if (rc == CLI_EXIT_OK)
		printf("token %s revoked\n", name);
	return rc;
}

int cli_tokens_main(int argc, char **argv, const struct cli_globals *g0)
{
	struct cli_globals g = *g0;
	const char *sub = argc >= 2 ? argv[1] : NULL;

	if (sub && cli_flag_is_help(sub)) {
		cli_tokens_usage(stdout);
		return CLI_EXIT_OK;
	}
	if (sub && !strcmp(sub, "create"))
		return tokens_create(argc - 1, argv + 1, &g);
	if (sub && !strcmp(sub, "list"))
		return tokens_list(argc - 1, argv + 1, &g);
	if (sub && !strcmp(sub, "revoke"))
		return tokens_revoke(argc - 1, argv + 1, &g);
	cli_error(sub ? "tokens: unknown subcommand \"%s\" (expected create, list or revoke)"
	              : "tokens: a subcommand is needed%s",
	          sub ? sub : "");
	cli_tokens_usage(stderr);
	return CLI_EXIT_USAGE;
}
