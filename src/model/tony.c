/* tony.c: tony.xml (libxml2) and TonY's submit flags into a job spec.
 *
 * The XML reader refuses any DOCTYPE: Hadoop configuration files never need
 * one, and without a DTD there are no entities to expand, so neither
 * external fetches nor entity bombs can reach us.  The key table below is
 * the one place that decides what each tony.* key means here; docs/tony.md
 * mirrors it.
 */
#include "model/tony.h"

#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#include <libxml/parser.h>
#include <libxml/tree.h>

#include "lib/dynlib.h"
#include "lib/fs.h"
#include "model/job_spec_edit.h"

/* libxml2, loaded at its first use (lib/dynlib.h), not at every start of weir;
 * the Makefile names it as the system's library does */
#ifndef WEIR_SONAME_XML2
#define WEIR_SONAME_XML2 "libxml2.so.2"
#endif
/* clang-format off */
#define XML_FUNCS(X, t)            \
	X(t, xmlCtxtGetLastError)  \
	X(t, xmlCtxtReadMemory)    \
	X(t, xmlDocGetRootElement) \
	X(t, xmlFree)              \
	X(t, xmlFreeDoc)           \
	X(t, xmlFreeParserCtxt)    \
	X(t, xmlGetLineNo)         \
	X(t, xmlInitParser)        \
	X(t, xmlNewParserCtxt)     \
	X(t, xmlNodeGetContent)    \
	X(t, xmlStrcmp)
/* clang-format on */
DYNLIB_TABLE(xml, XML_FUNCS, WEIR_SONAME_XML2, "TonY XML configurations");
#define xmlCtxtGetLastError (xml.xmlCtxtGetLastError)
#define xmlCtxtReadMemory (xml.xmlCtxtReadMemory)
#define xmlDocGetRootElement (xml.xmlDocGetRootElement)
/* xmlFree is libxml2's variable (the free function it was set up with):
 * its address is what the table holds */
#define xmlFree (*xml.xmlFree)
#define xmlFreeDoc (xml.xmlFreeDoc)
#define xmlFreeParserCtxt (xml.xmlFreeParserCtxt)
#define xmlGetLineNo (xml.xmlGetLineNo)
#define xmlInitParser (xml.xmlInitParser)
#define xmlNewParserCtxt (xml.xmlNewParserCtxt)
#define xmlNodeGetContent (xml.xmlNodeGetContent)
#define xmlStrcmp (xml.xmlStrcmp)

struct tony_conf *tony_conf_create(void)
{
	return calloc(1, sizeof(struct tony_conf));
}

void tony_conf_destroy(struct tony_conf *conf)
{
	if (!conf)
		return;
	for (size_t i = 0; i < conf->n; i++) {
		free(conf->props[i].name);
		free(conf->props[i].value);
		free(conf->props[i].origin);
	}
	free(conf->props);
	free(conf);
}

int tony_conf_set(struct tony_conf *conf, const char *name, const char *value, const char *origin,
                  int line, struct weir_error *err)
{
	char *n = strdup(name), *v = strdup(value ? value : ""), *o = strdup(origin ? origin : "");
	struct tony_prop *np =
	    n && v && o ? realloc(conf->props, (conf->n + 1) * sizeof *np) : NULL;
	if (!np) {
		free(n);
		free(v);
		free(o);
		return weir_error_oom(err);
	}
	conf->props = np;
	np[conf->n].name = n;
	np[conf->n].value = v;
	np[conf->n].origin = o;
	np[conf->n].line = line;
	conf->n++;
	return 0;
}

const struct tony_prop *tony_conf_get(const struct tony_conf *conf, const char *name)
{
	for (size_t i = conf->n; i > 0; i--)
		if (!strcmp(conf->props[i - 1].name, name))
			return &conf->props[i - 1];
	return NULL;
}

/* Copies `s` without leading and trailing white space (Hadoop trims too). */
static char *trimmed(const char *s)
{
	while (isspace((unsigned char)*s))
		s++;
	size_t len = strlen(s);
	while (len > 0 && isspace((unsigned char)s[len - 1]))
		len--;
	return strndup(s, len);
}

static bool is_elem(xmlNodePtr n, const char *name)
{
	return n->type == XML_ELEMENT_NODE && !xmlStrcmp(n->name, (const xmlChar *)name);
}

static int read_property(struct tony_conf *conf, xmlNodePtr prop, const char *origin,
                         struct weir_error *err)
{
	char *name = NULL, *value = NULL;
	int line = (int)xmlGetLineNo(prop);
	int rc = -1;

	for (xmlNodePtr c = prop->children; c; c = c->next) {
		char **slot = is_elem(c, "name") ? &name : is_elem(c, "value") ? &value : NULL;
		if (!slot)
			continue; /* description, final, source: nothing to do */
		xmlChar *text = xmlNodeGetContent(c);
		free(*slot);
		*slot = trimmed(text ? (const char *)text : "");
		xmlFree(text);
		if (!*slot) {
			weir_error_oom(err);
			goto out;
		}
	}
	if (!name || !*name) {
		weir_error_set(err, WEIR_E_INVALID, "%s:%d: a <property> without a <name>", origin,
		               line);
		goto out;
	}
	rc = tony_conf_set(conf, name, value ? value : "", origin, line, err);
out:
	free(name);
	free(value);
	return rc;
}

struct tony_conf *tony_conf_parse_buffer(const char *buf, size_t len, const char *origin,
                                         struct weir_error *err)
{
	struct tony_conf *conf = NULL;
	xmlDocPtr doc = NULL;
	xmlParserCtxtPtr ctxt = NULL;

	if (!origin)
		origin = "<tony.xml>";
	if (len > INT_MAX) {
		weir_error_set(err, WEIR_E_INVALID, "%s: too large for a configuration file",
		               origin);
		return NULL;
	}
	if (dynlib_load(&xml_lib, xml_syms, DYNLIB_COUNT(xml_syms), err) < 0)
		return NULL;
	xmlInitParser();
	ctxt = xmlNewParserCtxt();
	if (!ctxt) {
		weir_error_oom(err);
		return NULL;
	}
	/* No XML_PARSE_NOENT (no entity substitution), no DTDLOAD/DTDATTR. */
	doc = xmlCtxtReadMemory(ctxt, buf, (int)len, NULL, NULL,
	                        XML_PARSE_NONET | XML_PARSE_NOERROR | XML_PARSE_NOWARNING);
	if (!doc) {
		xmlErrorPtr e = xmlCtxtGetLastError(ctxt);
		char msg[256] = "not well-formed XML";
		if (e && e->message) {
			snprintf(msg, sizeof msg, "%s", e->message);
			msg[strcspn(msg, "\n")] = '\0';
		}
		weir_error_set(err, WEIR_E_INVALID, "%s:%d: malformed XML: %s", origin,
		               e && e->line > 0 ? e->line : 1, msg);
		goto out;
	}
	if (doc->intSubset || doc->extSubset) {
		xmlNodePtr dtd = (xmlNodePtr)(doc->intSubset ? doc->intSubset : doc->extSubset);
		weir_error_set(err, WEIR_E_INVALID,
		               "%s:%ld: a DOCTYPE is not allowed in a configuration file", origin,
		               xmlGetLineNo(dtd) > 0 ? xmlGetLineNo(dtd) : 1L);
		goto out;
	}
	xmlNodePtr root = xmlDocGetRootElement(doc);
	if (!root || !is_elem(root, "configuration")) {
		weir_error_set(err, WEIR_E_INVALID,
		               "%s:%ld: expected <configuration> as the root element, got <%s>",
		               origin, root ? xmlGetLineNo(root) : 1L,
		               root ? (const char *)root->name : "");
		goto out;
	}
	conf = tony_conf_create();
	if (!conf) {
		weir_error_oom(err);
		goto out;
	}
	for (xmlNodePtr c = root->children; c; c = c->next) {
		if (c->type != XML_ELEMENT_NODE)
			continue;
		if (!is_elem(c, "property")) {
			weir_error_set(err, WEIR_E_INVALID,
			               "%s:%ld: unexpected <%s>; expected <property> elements",
			               origin, xmlGetLineNo(c), (const char *)c->name);
			goto fail;
		}
		if (read_property(conf, c, origin, err) < 0)
			goto fail;
	}
	goto out;
fail:
	tony_conf_destroy(conf);
	conf = NULL;
out:
	xmlFreeDoc(doc);
	xmlFreeParserCtxt(ctxt);
	return conf;
}

struct tony_conf *tony_conf_parse_file(const char *path, struct weir_error *err)
{
	size_t len;
	char *text = fs_read_file(path, &len, err);
	if (!text)
		return NULL;
	struct tony_conf *conf = tony_conf_parse_buffer(text, len, path, err);
	free(text);
	return conf;
}

/* ---- submit flags ---- */

enum flag_kind { F_STR, F_PATH, F_LIST, F_WARN };

struct flag_def {
	const char *name;
	enum flag_kind kind;
	size_t off; /* offsetof in struct tony_submit */
};

#define OFF(f) __builtin_offsetof(struct tony_submit, f)
static const struct flag_def flag_defs[] = {
    {"conf_file", F_PATH, OFF(conf_file)},
    {"src_dir", F_PATH, OFF(src_dir)},
    {"executes", F_STR, OFF(executes)},
    {"task_params", F_STR, OFF(task_params)},
    {"python_venv", F_PATH, OFF(python_venv)},
    {"python_binary_path", F_STR, OFF(python_binary_path)},
    {"framework", F_STR, OFF(framework)},
    {"shell_env", F_LIST, OFF(shell_env)},
    {"container_env", F_LIST, OFF(container_env)},
    {"conf", F_LIST, OFF(conf)},
    /* TonY flags that only matter on a Hadoop cluster. */
    {"hdfs_classpath", F_WARN, 0},
};
#undef OFF

static const struct flag_def *find_flag(const char *arg, size_t *name_len)
{
	if (strncmp(arg, "--", 2) != 0)
		return NULL;
	const char *name = arg + 2;
	size_t len = strcspn(name, "=");
	for (size_t i = 0; i < sizeof flag_defs / sizeof *flag_defs; i++) {
		if (strlen(flag_defs[i].name) == len && !strncmp(flag_defs[i].name, name, len)) {
			if (name_len)
				*name_len = len;
			return &flag_defs[i];
		}
	}
	return NULL;
}

int submit_flag_arity(int argc, char **argv, int i)
{
	size_t len;
	if (i < 0 || i >= argc || !find_flag(argv[i], &len))
		return 0;
	if (argv[i][2 + len] == '=')
		return 1;
	return i + 1 < argc ? 2 : 1;
}

void tony_submit_release(struct tony_submit *s)
{
	free(s->conf_file);
	free(s->src_dir);
	free(s->executes);
	free(s->task_params);
	free(s->python_venv);
	free(s->python_binary_path);
	free(s->framework);
	strvec_release(&s->shell_env);
	strvec_release(&s->container_env);
	strvec_release(&s->conf);
	memset(s, 0, sizeof *s);
}

static char *absolute(const char *path)
{
	if (path[0] == '/')
		return strdup(path);
	char *cwd = getcwd(NULL, 0);
	if (!cwd)
		return NULL;
	const char *rel = path;
	while (rel[0] == '.' && rel[1] == '/')
		rel += 2;
	char *out = *rel && strcmp(rel, ".") ? fs_join(cwd, rel) : strdup(cwd);
	free(cwd);
	return out;
}

int tony_submit_parse(int argc, char **argv, struct tony_submit *out, struct weir_error *err)
{
	for (int i = 0; i < argc; i++) {
		const char *arg = argv[i];
		size_t len;
		const struct flag_def *f = find_flag(arg, &len);
		const char *value;

		if (!f) {
			weir_error_set(
			    err, WEIR_E_INVALID,
			    "%s: unknown flag; expected --conf_file, --src_dir, --executes, "
			    "--task_params, --python_venv, --python_binary_path, "
			    "--shell_env, --container_env, --conf or --framework",
			    arg);
			goto fail;
		}
		if (arg[2 + len] == '=') {
			value = arg + 3 + len;
		} else if (i + 1 < argc) {
			value = argv[++i];
		} else {
			weir_error_set(err, WEIR_E_INVALID, "--%s: missing value", f->name);
			goto fail;
		}
		if (f->kind == F_WARN)
			continue;
		if (f->kind != F_LIST && !*value) {
			weir_error_set(err, WEIR_E_INVALID, "--%s: expected a value, got \"\"",
			               f->name);
			goto fail;
		}
		if ((f->kind == F_LIST) &&
		    (!strcmp(f->name, "shell_env") || !strcmp(f->name, "container_env"))) {
			const char *eq = strchr(value, '=');
			char name[256];
			size_t nl = eq ? (size_t)(eq - value) : 0;
			if (eq && nl < sizeof name) {
				memcpy(name, value, nl);
				name[nl] = '\0';
			}
			if (!eq || nl >= sizeof name || !env_name_valid(name)) {
				weir_error_set(err, WEIR_E_INVALID,
				               "--%s: expected NAME=VALUE with NAME like "
				               "[A-Za-z_][A-Za-z0-9_]*, got \"%s\"",
				               f->name, value);
				goto fail;
			}
		}
		if (f->kind == F_LIST && !strcmp(f->name, "conf") &&
		    (!strchr(value, '=') || value[0] == '=')) {
			weir_error_set(err, WEIR_E_INVALID,
			               "--conf: expected key=value, got \"%s\"", value);
			goto fail;
		}
		if (f->kind == F_LIST) {
			if (strvec_push((struct strvec *)((char *)out + f->off), value) < 0) {
				weir_error_oom(err);
				goto fail;
			}
			continue;
		}
		char **slot = (char **)((char *)out + f->off);
		char *copy = f->kind == F_PATH ? absolute(value) : strdup(value);
		if (!copy) {
			weir_error_oom(err);
			goto fail;
		}
		free(*slot);
		*slot = copy;
	}
	return 0;
fail:
	tony_submit_release(out);
	return -1;
}

/* ---- keys ---- */

/* Second components of tony.X.* that are not roles. */
static const char *const not_roles[] = {
    "application", "am",    "task",      "container", "containers", "yarn",        "history",
    "keytab",      "https", "http",      "secret",    "portal",     "other",       "version-info",
    "docker",      "init",  "execution", "horovod",   "client",     "tensorboard", NULL,
};

/* Keys (or prefixes ending in '.') that have no meaning here, and why. */
static const struct {
	const char *key;
	const char *why;
} ignored_keys[] = {
    {"tony.yarn.", "no YARN here (tony.yarn.queue is the server's queue)"},
    {"tony.application.security.", "no Kerberos here; the API token authenticates"},
    {"tony.keytab.", "no Kerberos here; the API token authenticates"},
    {"tony.other.namenodes", "no HDFS delegation tokens here"},
    {"tony.application.docker.", "tasks run without docker, in the host's environment"},
    {"tony.docker.", "tasks run without docker, in the host's environment"},
    {"tony.application.node-label", "no YARN node labels here"},
    {"tony.application.hdfs-conf-path", "no Hadoop configuration is shipped"},
    {"tony.application.yarn-conf-path", "no Hadoop configuration is shipped"},
    {"tony.application.mapred-conf-path", "no Hadoop configuration is shipped"},
    {"tony.application.type", "YARN application attribute"},
    {"tony.application.tags", "YARN application attribute"},
    {"tony.application.num-client-rm-connect-retries", "no YARN resource manager here"},
    {"tony.application.enable-preprocess", "no application master runs user code here"},
    {"tony.application.single-node", "weir decides placement itself"},
    {"tony.application.test.", "TonY test switch"},
    {"tony.am.", "weir has no application master (its server plays that part)"},
    {"tony.task.am.jvm.opts", "no JVM runs here"},
    {"tony.task.executor.jvm.opts", "no JVM runs here"},
    {"tony.task.heartbeat-interval", "weir launch reports on its own schedule"},
    {"tony.task.max-missed-heartbeats", "weir launch reports on its own schedule"},
    {"tony.task.metrics-interval-ms", "weir launch reports usage at exit"},
    {"tony.task.gpu-metrics.enabled", "weir launch reports usage at exit"},
    {"tony.history.", "TonY's history server is not used"},
    {"tony.portal.", "TonY's portal is not used"},
    {"tony.https.", "TonY's portal is not used"},
    {"tony.http.", "TonY's portal is not used"},
    {"tony.secret.", "TonY's portal is not used"},
    {"tony.init.", "TonY's portal is not used"},
    {"tony.version-info.", "TonY build information"},
    {"tony.client.", "TonY client setting"},
};

struct builder {
	const struct tony_conf *conf;
	struct job_spec *spec;
	struct strvec *warnings;
	struct weir_error *err;
	int64_t exec_timeout_s; /* smallest positive of the three timeout keys */
};

static int warn(struct builder *b, const struct tony_prop *p, const char *why)
{
	if (!b->warnings)
		return 0;
	int rc;
	if (p->line > 0)
		rc = strvec_pushf(b->warnings, "%s:%d: %s: ignored: %s", p->origin, p->line,
		                  p->name, why);
	else
		rc = strvec_pushf(b->warnings, "%s %s: ignored: %s", p->origin, p->name, why);
	return rc < 0 ? weir_error_oom(b->err) : 0;
}

static int prop_fail(struct builder *b, const struct tony_prop *p, const char *what)
{
	if (p->line > 0)
		return weir_error_set(b->err, WEIR_E_INVALID, "%s:%d: %s: %s, got \"%s\"",
		                      p->origin, p->line, p->name, what, p->value);
	return weir_error_set(b->err, WEIR_E_INVALID, "%s %s: %s, got \"%s\"", p->origin, p->name,
	                      what, p->value);
}

static int prop_int(struct builder *b, const struct tony_prop *p, long long min, long long max,
                    long long *out)
{
	char *end;
	errno = 0;
	long long v = strtoll(p->value, &end, 10);
	if (errno || end == p->value || *end || v < min || v > max) {
		char what[128];
		snprintf(what, sizeof what, "expected an integer from %lld to %lld", min, max);
		return prop_fail(b, p, what);
	}
	*out = v;
	return 0;
}

static int prop_bool(struct builder *b, const struct tony_prop *p, bool *out)
{
	if (!strcasecmp(p->value, "true"))
		*out = true;
	else if (!strcasecmp(p->value, "false"))
		*out = false;
	else
		return prop_fail(b, p, "expected true or false");
	return 0;
}

/* Milliseconds (<= 0: no limit) into whole seconds, rounded up. */
static int prop_ms(struct builder *b, const struct tony_prop *p, int64_t *out)
{
	long long ms;
	if (prop_int(b, p, LLONG_MIN / 2, JOB_SPEC_MAX_TIMEOUT_S * 1000LL, &ms) < 0)
		return -1;
	*out = ms <= 0 ? 0 : (ms + 999) / 1000;
	return 0;
}

static void min_timeout(struct builder *b, int64_t s)
{
	if (s > 0 && (b->exec_timeout_s == 0 || s < b->exec_timeout_s))
		b->exec_timeout_s = s;
}

/* A role's tony.<role>.<attr> key: splits it; false if not role-shaped. */
static bool split_role_key(const char *key, char *role, size_t rsize, const char **attr)
{
	if (strncmp(key, "tony.", 5) != 0)
		return false;
	const char *r = key + 5;
	const char *dot = strchr(r, '.');
	if (!dot || dot == r || (size_t)(dot - r) >= rsize)
		return false;
	memcpy(role, r, (size_t)(dot - r));
	role[dot - r] = '\0';
	for (size_t i = 0; not_roles[i]; i++)
		if (!strcmp(not_roles[i], role))
			return false;
	*attr = dot + 1;
	return true;
}

static bool is_winner(const struct tony_conf *conf, size_t i)
{
	return tony_conf_get(conf, conf->props[i].name) == &conf->props[i];
}

/* "a.zip,/b/dir#name,c.tgz::alias#archive" -> artifacts. */
static int add_resources(struct builder *b, const struct tony_prop *p)
{
	char *list = strdup(p->value);
	int rc = -1;
	if (!list)
		return weir_error_oom(b->err);
	for (char *save = NULL, *item = strtok_r(list, ",", &save); item;
	     item = strtok_r(NULL, ",", &save)) {
		char *path = trimmed(item), *name = NULL, *abs = NULL;
		int archive = -1;
		if (!path) {
			weir_error_oom(b->err);
			goto out;
		}
		char *hash = strrchr(path, '#');
		if (hash) {
			*hash = '\0';
			if (!strcmp(hash + 1, "archive"))
				archive = 1;
			else
				name = hash + 1;
		}
		char *colons = strstr(path, "::");
		if (colons) {
			*colons = '\0';
			name = colons + 2;
		}
		if (!*path) {
			free(path);
			continue;
		}
		if (strstr(path, "://")) {
			int w =
			    warn(b, p, "only local paths can be shipped; a URL entry was skipped");
			free(path);
			if (w < 0)
				goto out;
			continue;
		}
		abs = absolute(path);
		bool dup = false;
		for (size_t i = 0; abs && i < b->spec->n_artifacts; i++)
			if (!strcmp(b->spec->artifacts[i].path, abs))
				dup = true; /* the same file listed for two roles */
		int a = !abs  ? weir_error_oom(b->err)
		        : dup ? 0
		              : job_spec_add_artifact(b->spec, abs, name && *name ? name : NULL,
		                                      archive, b->err);
		free(abs);
		free(path);
		if (a < 0)
			goto out;
	}
	rc = 0;
out:
	free(list);
	return rc;
}

static int apply_role_key(struct builder *b, const struct tony_prop *p, const char *rname,
                          const char *attr)
{
	struct role_spec *role = NULL;
	long long v;

	for (size_t i = 0; i < b->spec->n_roles; i++)
		if (!strcmp(b->spec->roles[i].name, rname))
			role = &b->spec->roles[i];
	if (!strcmp(attr, "instances"))
		return 0; /* done in the first pass */
	bool known = !strcmp(attr, "memory") || !strcmp(attr, "vcores") || !strcmp(attr, "gpus") ||
	             !strcmp(attr, "command") || !strcmp(attr, "resources") ||
	             !strcmp(attr, "timeout");
	if (!known)
		return warn(b, p, "no meaning here");
	if (!role) {
		char ik[192];
		snprintf(ik, sizeof ik, "tony.%s.instances", rname);
		if (tony_conf_get(b->conf, ik))
			return 0; /* instances 0: the role is off on purpose */
		snprintf(ik, sizeof ik, "no tony.%s.instances is set, so there is no such role",
		         rname);
		return warn(b, p, ik);
	}
	if (!strcmp(attr, "memory")) {
		uint64_t mb;
		struct weir_error local;
		if (parse_memory_mb(p->value, p->name, &mb, &local) < 0)
			return prop_fail(b, p,
			                 "expected an amount like 4g or 2048m (a plain number "
			                 "is MiB)");
		role->memory_mb = mb;
	} else if (!strcmp(attr, "vcores")) {
		if (prop_int(b, p, 1, JOB_SPEC_MAX_VCORES, &v) < 0)
			return -1;
		role->vcores = (int)v;
	} else if (!strcmp(attr, "gpus")) {
		if (prop_int(b, p, 0, JOB_SPEC_MAX_GPUS, &v) < 0)
			return -1;
		role->gpus = (int)v;
	} else if (!strcmp(attr, "command")) {
		if (*p->value && job_spec_set_string(&role->command, p->value, b->err) < 0)
			return -1;
	} else if (!strcmp(attr, "resources")) {
		return add_resources(b, p);
	} else if (!strcmp(attr, "timeout")) {
		int64_t s;
		if (prop_ms(b, p, &s) < 0)
			return -1;
		min_timeout(b, s);
	}
	return 0;
}

/* "ps,evaluator" applied to a boolean of each named role. */
static int apply_role_list(struct builder *b, const char *key, const char *dflt, size_t field_off)
{
	const struct tony_prop *p = tony_conf_get(b->conf, key);
	char *list = strdup(p ? p->value : dflt);
	if (!list)
		return weir_error_oom(b->err);
	for (char *save = NULL, *item = strtok_r(list, ", \t\n", &save); item;
	     item = strtok_r(NULL, ", \t\n", &save)) {
		for (size_t i = 0; i < b->spec->n_roles; i++)
			if (!strcmp(b->spec->roles[i].name, item))
				*(bool *)((char *)&b->spec->roles[i] + field_off) = true;
	}
	free(list);
	return 0;
}

static int apply_app_key(struct builder *b, const struct tony_prop *p)
{
	const char *k = p->name;
	long long v;
	int64_t s;

	if (!strcmp(k, "tony.application.name")) {
		if (!*p->value)
			return prop_fail(b, p, "expected a name");
		return job_spec_set_string(&b->spec->name, p->value, b->err);
	}
	if (!strcmp(k, "tony.yarn.queue")) {
		/* the server's queue (docs/slurm.md, "Routing"); YARN's own
		 * `default` is where work goes when none is named: no queue here */
		if (!*p->value || !strcmp(p->value, "default"))
			return 0;
		return job_spec_set_string(&b->spec->queue, p->value, b->err);
	}
	if (!strcmp(k, "tony.application.framework")) {
		if (!strcasecmp(p->value, "standalone")) {
			b->spec->framework = FRAMEWORK_NONE;
			return 0;
		}
		if (framework_from_name(p->value, &b->spec->framework) < 0)
			return prop_fail(
			    b, p, "expected tensorflow, pytorch, mxnet, horovod or standalone");
		return 0;
	}
	if (!strcmp(k, "tony.application.untracked.jobtypes") ||
	    !strcmp(k, "tony.application.stop-on-failure-jobtypes") ||
	    !strcmp(k, "tony.application.sidecar.jobtypes"))
		return 0; /* applied once the roles exist */
	if (!strcmp(k, "tony.application.fail-on-worker-failure-enabled"))
		return prop_bool(b, p, &b->spec->fail_on_worker_failure);
	if (!strcmp(k, "tony.application.timeout")) {
		if (prop_ms(b, p, &s) < 0)
			return -1;
		min_timeout(b, s);
		return 0;
	}
	if (!strcmp(k, "tony.task.executor.execution-timeout-ms")) {
		if (prop_ms(b, p, &s) < 0)
			return -1;
		min_timeout(b, s);
		return 0;
	}
	if (!strcmp(k, "tony.container.allocation.timeout")) {
		if (prop_ms(b, p, &s) < 0)
			return -1;
		b->spec->allocation_timeout_s = s;
		return 0;
	}
	if (!strcmp(k, "tony.task.registration-timeout-sec")) {
		if (prop_int(b, p, 0, JOB_SPEC_MAX_TIMEOUT_S, &v) < 0)
			return -1;
		b->spec->registration_timeout_s = v;
		return 0;
	}
	if (!strcmp(k, "tony.am.retry-count")) {
		if (prop_int(b, p, 0, JOB_SPEC_MAX_RESTARTS, &v) < 0)
			return -1;
		b->spec->max_restarts = (int)v;
		return 0;
	}
	if (!strcmp(k, "tony.application.distributed-mode")) {
		if (!strcasecmp(p->value, "GANG"))
			return 0;
		return warn(b, p, "weir always starts every task of a job together (GANG)");
	}
	if (!strcmp(k, "tony.task.max-total-instances") || !strcmp(k, "tony.task.max-total-gpus"))
		return prop_int(b, p, -1, INT_MAX, &v); /* checked after the roles are known */
	if (!strcmp(k, "tony.containers.resources"))
		return add_resources(b, p);
	if (!strcmp(k, "tony.containers.envs") || !strcmp(k, "tony.execution.envs")) {
		char *list = strdup(p->value);
		int rc = 0;
		if (!list)
			return weir_error_oom(b->err);
		for (char *save = NULL, *item = strtok_r(list, ",", &save); item && rc == 0;
		     item = strtok_r(NULL, ",", &save)) {
			char *kv = trimmed(item);
			char *eq = kv ? strchr(kv, '=') : NULL;
			if (!kv)
				rc = weir_error_oom(b->err);
			else if (!eq || eq == kv || (*eq = '\0', !env_name_valid(kv)))
				rc = prop_fail(b, p, "expected NAME=VALUE,NAME=VALUE");
			else
				rc = env_list_set(&b->spec->env, &b->spec->n_env, kv, eq + 1,
				                  b->err);
			free(kv);
		}
		free(list);
		return rc;
	}
	for (size_t i = 0; i < sizeof ignored_keys / sizeof *ignored_keys; i++) {
		const char *ik = ignored_keys[i].key;
		size_t il = strlen(ik);
		if (ik[il - 1] == '.' ? !strncmp(k, ik, il) : !strcmp(k, ik))
			return warn(b, p, ignored_keys[i].why);
	}
	if (strncmp(k, "tony.", 5) != 0)
		return warn(b, p, "not a TonY key");
	return warn(b, p, "unknown TonY key");
}

static int check_totals(struct builder *b)
{
	const struct tony_prop *pi = tony_conf_get(b->conf, "tony.task.max-total-instances");
	const struct tony_prop *pg = tony_conf_get(b->conf, "tony.task.max-total-gpus");
	long long total_i = 0, total_g = 0, lim;
	for (size_t i = 0; i < b->spec->n_roles; i++) {
		total_i += b->spec->roles[i].instances;
		total_g += (long long)b->spec->roles[i].instances * b->spec->roles[i].gpus;
	}
	if (pi && prop_int(b, pi, -1, INT_MAX, &lim) == 0 && lim >= 0 && total_i > lim) {
		char what[128];
		snprintf(what, sizeof what, "the roles ask for %lld tasks, more than this limit",
		         total_i);
		return prop_fail(b, pi, what);
	}
	if (pg && prop_int(b, pg, -1, INT_MAX, &lim) == 0 && lim >= 0 && total_g > lim) {
		char what[128];
		snprintf(what, sizeof what, "the roles ask for %lld GPUs, more than this limit",
		         total_g);
		return prop_fail(b, pg, what);
	}
	return 0;
}

static int apply_flags(struct builder *b, const struct tony_submit *f)
{
	struct job_spec *s = b->spec;
	if (f->framework) {
		if (!strcasecmp(f->framework, "standalone"))
			s->framework = FRAMEWORK_NONE;
		else if (framework_from_name(f->framework, &s->framework) < 0)
			return weir_error_set(b->err, WEIR_E_INVALID,
			                      "--framework: expected tensorflow, pytorch, mxnet, "
			                      "horovod or none, got \"%s\"",
			                      f->framework);
	}
	if ((f->src_dir && job_spec_set_string(&s->src_dir, f->src_dir, b->err) < 0) ||
	    (f->executes && job_spec_set_string(&s->entry_point, f->executes, b->err) < 0) ||
	    (f->task_params && job_spec_set_string(&s->params, f->task_params, b->err) < 0))
		return -1;
	if (f->python_binary_path) {
		free(s->python);
		s->python = tony_python_path(f->python_binary_path, f->python_venv != NULL);
		if (!s->python)
			return weir_error_oom(b->err);
	}
	if (f->python_venv) {
		for (size_t i = 0; i < s->n_artifacts; i++)
			if (!strcmp(s->artifacts[i].name, "venv"))
				return weir_error_set(b->err, WEIR_E_INVALID,
				                      "--python_venv: a resource is already named "
				                      "venv (%s)",
				                      s->artifacts[i].path);
		if (job_spec_add_artifact(s, f->python_venv, "venv", 1, b->err) < 0)
			return -1;
	}
	const struct strvec *lists[2] = {&f->shell_env, &f->container_env};
	for (int l = 0; l < 2; l++) {
		for (size_t i = 0; i < lists[l]->n; i++) {
			const char *kv = lists[l]->v[i];
			const char *eq = strchr(kv, '=');
			char *name = eq ? strndup(kv, (size_t)(eq - kv)) : NULL;
			int rc = name ? env_list_set(&s->env, &s->n_env, name, eq + 1, b->err)
			              : weir_error_set(b->err, WEIR_E_INVALID,
			                               "--%s: expected NAME=VALUE, got \"%s\"",
			                               l ? "container_env" : "shell_env", kv);
			free(name);
			if (rc < 0)
				return -1;
		}
	}
	return 0;
}

struct job_spec *tony_to_spec(const struct tony_conf *conf, const struct tony_submit *flags,
                              struct strvec *warnings, struct weir_error *err)
{
	struct tony_conf empty = {NULL, 0};
	struct builder b = {.conf = conf ? conf : &empty, .warnings = warnings, .err = err};
	char rname[80];
	const char *attr;

	conf = b.conf;
	b.spec = job_spec_create();
	if (!b.spec) {
		weir_error_oom(err);
		return NULL;
	}
	b.spec->framework = FRAMEWORK_TENSORFLOW; /* TonY's default */

	/* First pass: the roles, in the order their instances appear. */
	for (size_t i = 0; i < conf->n; i++) {
		const struct tony_prop *p = &conf->props[i];
		long long n;
		if (!is_winner(conf, i) || !split_role_key(p->name, rname, sizeof rname, &attr) ||
		    strcmp(attr, "instances"))
			continue;
		if (!role_name_valid(rname)) {
			prop_fail(&b, p,
			          "the role name must be [a-z][a-z0-9_-]* of at most 63 "
			          "characters; key");
			goto fail;
		}
		if (prop_int(&b, p, 0, JOB_SPEC_MAX_INSTANCES, &n) < 0)
			goto fail;
		if (n == 0)
			continue; /* TonY: a role with no instances is not there */
		struct role_spec *r = job_spec_add_role(b.spec, rname, err);
		if (!r)
			goto fail;
		r->instances = (int)n;
	}
	for (size_t i = 0; i < conf->n; i++) {
		const struct tony_prop *p = &conf->props[i];
		if (!is_winner(conf, i))
			continue;
		int rc = split_role_key(p->name, rname, sizeof rname, &attr)
		             ? apply_role_key(&b, p, rname, attr)
		             : apply_app_key(&b, p);
		if (rc < 0)
			goto fail;
	}
	b.spec->execution_timeout_s = b.exec_timeout_s;
	if (apply_role_list(&b, "tony.application.untracked.jobtypes", "ps",
	                    __builtin_offsetof(struct role_spec, untracked)) < 0 ||
	    apply_role_list(&b, "tony.application.stop-on-failure-jobtypes", "ps",
	                    __builtin_offsetof(struct role_spec, stop_on_failure)) < 0 ||
	    apply_role_list(&b, "tony.application.sidecar.jobtypes", "",
	                    __builtin_offsetof(struct role_spec, sidecar)) < 0)
		goto fail;
	for (size_t i = 0; i < b.spec->n_roles; i++)
		if (b.spec->roles[i].sidecar)
			b.spec->roles[i].untracked = true;
	if (check_totals(&b) < 0)
		goto fail;
	if (flags && apply_flags(&b, flags) < 0)
		goto fail;

	/* Say what is missing in TonY's words before the generic validation. */
	if (b.spec->n_roles == 0) {
		weir_error_set(err, WEIR_E_INVALID,
		               "no roles: set tony.<role>.instances, e.g. tony.worker.instances=2");
		goto fail;
	}
	for (size_t i = 0; i < b.spec->n_roles; i++) {
		const struct role_spec *r = &b.spec->roles[i];
		if ((!r->command || !*r->command) && !b.spec->entry_point) {
			weir_error_set(err, WEIR_E_INVALID,
			               "tony.%s.command: missing; pass --executes or set "
			               "tony.%s.command",
			               r->name, r->name);
			goto fail;
		}
	}
	if (job_spec_validate(b.spec, err) < 0)
		goto fail;
	return b.spec;
fail:
	job_spec_destroy(b.spec);
	return NULL;
}

char *tony_python_path(const char *path, bool have_venv)
{
	char *out = NULL;
	if (path[0] == '/' || !have_venv)
		return strdup(path);
	while (path[0] == '.' && path[1] == '/')
		path += 2;
	if (!strncmp(path, "venv/", 5))
		return strdup(path);
	return asprintf(&out, "venv/%s", path) < 0 ? NULL : out;
}

/* Appends the properties of `path` to `conf` (a later one wins). */
static int conf_layer(struct tony_conf *conf, const char *path, const struct tony_lookup *lookup,
                      struct weir_error *err)
{
	struct tony_conf *layer = tony_conf_parse_file(path, err);
	int rc = layer ? 0 : -1;
	for (size_t i = 0; layer && rc == 0 && i < layer->n; i++) {
		const struct tony_prop *p = &layer->props[i];
		rc = tony_conf_set(conf, p->name, p->value, p->origin, p->line, err);
	}
	tony_conf_destroy(layer);
	if (rc == 0 && lookup && lookup->read && strvec_push(lookup->read, path) < 0)
		rc = weir_error_oom(err);
	return rc;
}

struct tony_conf *tony_conf_load(const struct tony_submit *flags, const struct tony_lookup *lookup,
                                 struct weir_error *err)
{
	struct tony_conf *conf = tony_conf_create();
	char *site = NULL;
	if (!conf) {
		weir_error_oom(err);
		return NULL;
	}
	/* TonyClient.initTonyConf: tony-default.xml (weir's own defaults
	 * here), the conf file or tony.xml, then tony-site.xml added after it;
	 * --conf values are set() and so win over every file. */
	if (flags->conf_file) {
		if (conf_layer(conf, flags->conf_file, lookup, err) < 0)
			goto fail;
	} else if (lookup && fs_exists("tony.xml") &&
	           conf_layer(conf, "tony.xml", lookup, err) < 0) {
		goto fail;
	}
	if (lookup && lookup->conf_dir && *lookup->conf_dir) {
		site = fs_join(lookup->conf_dir, "tony-site.xml");
		if (!site) {
			weir_error_oom(err);
			goto fail;
		}
		if (fs_exists(site) && conf_layer(conf, site, lookup, err) < 0)
			goto fail;
	}
	for (size_t i = 0; i < flags->conf.n; i++) {
		const char *kv = flags->conf.v[i];
		const char *eq = strchr(kv, '=');
		char *k = strndup(kv, (size_t)(eq - kv));
		char *key = k ? trimmed(k) : NULL;
		char *val = trimmed(eq + 1);
		int rc = key && val ? tony_conf_set(conf, key, val, "--conf", 0, err)
		                    : weir_error_oom(err);
		free(k);
		free(key);
		free(val);
		if (rc < 0)
			goto fail;
	}
	free(site);
	return conf;
fail:
	free(site);
	tony_conf_destroy(conf);
	return NULL;
}

/* --executes without --src_dir, run where the file is: ships the first
 * component of its path (the file, or the folder it is in) from the
 * current directory, so that the same relative path names it in the task's
 * working directory.  Nothing to do for an absolute path, a module (`-m`
 * ...), or a name a resource already ships. */
static int ship_executes(struct job_spec *s, const char *executes, struct weir_error *err)
{
	const char *e = executes;
	while (e[0] == '.' && e[1] == '/')
		e += 2;
	if (e[0] == '/' || e[0] == '-' || s->src_dir)
		return 0;
	size_t len = strcspn(e, "/ \t");
	char *first = strndup(e, len);
	char *abs = first ? absolute(first) : NULL;
	int rc = 0;
	if (!abs) {
		rc = weir_error_oom(err);
		goto out;
	}
	for (size_t i = 0; i < s->n_artifacts; i++)
		if (!strcmp(s->artifacts[i].name, first))
			goto out; /* tony.*.resources ships it already */
	if (!len || !strcmp(first, "..") || !strcmp(first, ".") || !fs_exists(abs)) {
		rc = weir_error_set(
		    err, WEIR_E_INVALID,
		    "--executes %s: no such file in the current directory, and no "
		    "--src_dir to find it in; pass --src_dir DIR (the folder that "
		    "holds it, shipped to every task) or run weir submit where it is",
		    executes);
		goto out;
	}
	rc = job_spec_add_artifact(s, abs, first, 0, err);
out:
	free(first);
	free(abs);
	return rc;
}

struct job_spec *submit_flags_load(int argc, char **argv, const struct tony_lookup *lookup,
                                   struct strvec *warnings, struct weir_error *err)
{
	struct tony_submit flags;
	struct tony_conf *conf = NULL;
	struct job_spec *spec = NULL;

	memset(&flags, 0, sizeof flags);
	if (tony_submit_parse(argc, argv, &flags, err) < 0)
		return NULL;
	conf = tony_conf_load(&flags, lookup, err);
	if (conf)
		spec = tony_to_spec(conf, &flags, warnings, err);
	if (spec && lookup && flags.executes &&
	    (ship_executes(spec, flags.executes, err) < 0 || job_spec_validate(spec, err) < 0)) {
		job_spec_destroy(spec);
		spec = NULL;
	}
	tony_conf_destroy(conf);
	tony_submit_release(&flags);
	return spec;
}

struct job_spec *submit_flags_parse(int argc, char **argv, struct strvec *warnings,
                                    struct weir_error *err)
{
	return submit_flags_load(argc, argv, NULL, warnings, err);
}
