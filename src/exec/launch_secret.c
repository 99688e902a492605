/* launch_secret.c: a launcher's secret, derived from the server's token
 * (launch_secret.h). */
#include "exec/launch_secret.h"

#include <stdio.h>
#include <string.h>

#include <nettle/hmac.h>

/* HMAC-SHA256(key, text) as hex into out. */
static void mac_hex(const char *key, const char *text, char out[LAUNCH_SECRET_HEX + 1])
{
	struct hmac_sha256_ctx ctx;
	uint8_t mac[SHA256_DIGEST_SIZE];

	hmac_sha256_set_key(&ctx, strlen(key ? key : ""), (const uint8_t *)(key ? key : ""));
	hmac_sha256_update(&ctx, strlen(text), (const uint8_t *)text);
	hmac_sha256_digest(&ctx, sizeof mac, mac);
	for (size_t i = 0; i < sizeof mac; i++)
		snprintf(out + 2 * i, 3, "%02x", mac[i]);
	memset(&ctx, 0, sizeof ctx);
}

/* The texts of the three kinds differ in their first word, so one is never
 * another's. */
void launch_secret_task(const char *key, int64_t job, const char *role, int index, int attempt,
                        char out[LAUNCH_SECRET_HEX + 1])
{
	char text[200];

	snprintf(text, sizeof text, "weir-launch-task\n%lld\n%s\n%d\n%d", (long long)job, role,
	         index, attempt);
	mac_hex(key, text, out);
}

void launch_secret_attempt(const char *key, int64_t job, int attempt,
                           char out[LAUNCH_SECRET_HEX + 1])
{
	char text[80];

	snprintf(text, sizeof text, "weir-launch-attempt\n%lld\n%d", (long long)job, attempt);
	mac_hex(key, text, out);
}

void launch_secret_read(const char *key, int64_t job, const char *role, int index, int attempt,
                        char out[LAUNCH_SECRET_HEX + 1])
{
	char text[200];

	snprintf(text, sizeof text, "weir-task-read\n%lld\n%s\n%d\n%d", (long long)job, role, index,
	         attempt);
	mac_hex(key, text, out);
}
