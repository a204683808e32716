/* cmd_version -- `sluice version`: version, commit, build date and the libraries it runs with. */
/* SPDX-License-Identifier: Apache-2.0 */
#include "commands.h"

#include "util/util.h"
#include "version_info.h"

#include <curl/curl.h>
#include <http_parser.h>
#include <jansson.h>
#include <openssl/crypto.h>
#include <stdio.h>
#include <string.h>
#include <uv.h>
#include <yaml.h>

#ifndef SLUICE_VERSION
#define SLUICE_VERSION "dev"
#endif

/*
 * The library versions are asked of the libraries themselves at run time, so they name what the
 * binary is actually linked with on this machine (a shared libcurl upgraded under it shows), not
 * the headers it was compiled against.
 */

enum { OPT_OUTPUT = 1 };

static const cli_opt_t version_opts[] = {
    CLI_OPT_OUTPUT(OPT_OUTPUT, "json yaml"),
};

static void usage(FILE *out)
{
    fputs("usage: sluice version [-o json|yaml]\n"
          "\n"
          "Print the version of sluice, the git commit it was built from (\"-dirty\" when the\n"
          "tree had uncommitted changes), the build date (UTC; $SOURCE_DATE_EPOCH when the build\n"
          "set it) and the versions of the libraries it runs with: libcurl (and its TLS\n"
          "library), libyaml, jansson, OpenSSL, libuv, http-parser. The first line is always\n"
          "\"sluice VERSION\".\n"
          "\n"
          "options:\n"
          "  -o, --output FORMAT  json or yaml: one document with the same fields\n"
          "  -h, --help           show this help\n"
          "\n"
          "exit status: 0 printed, 2 usage or write error.\n",
          out);
}

/* {"version", "commit", "buildDate", "compiler", "libraries": {name: version}}, or NULL. */
static json_t *version_doc(void)
{
    const curl_version_info_data *curl = curl_version_info(CURLVERSION_NOW);
    unsigned long hp = http_parser_version();
    char hpv[32];

    snprintf(hpv, sizeof(hpv), "%lu.%lu.%lu", (hp >> 16) & 255, (hp >> 8) & 255, hp & 255);
    return json_pack(
        "{s:s, s:s, s:s, s:s, s:{s:s, s:s, s:s, s:s, s:s, s:s, s:s}}", "version", SLUICE_VERSION,
        "commit", sluice_git_commit, "buildDate", sluice_build_date, "compiler",
#if defined(__clang__)
        "clang " __clang_version__,
#elif defined(__GNUC__)
        "gcc " __VERSION__,
#else
        "unknown",
#endif
        "libraries", "libcurl", curl->version, "libcurlTLS",
        curl->ssl_version != NULL ? curl->ssl_version : "none", "libyaml",
        yaml_get_version_string(), "jansson", jansson_version_str(), "openssl",
        OpenSSL_version(OPENSSL_VERSION_STRING), "libuv", uv_version_string(), "http-parser", hpv);
}

static int version_run(int argc, char **argv)
{
    cli_output_t fmt = CLI_OUTPUT_TEXT;
    const char *val;
    json_t *doc, *libs;
    err_msg_t msg;
    err_t rc;
    cli_t p;
    int id;

    cli_init(&p, &cmd_version, argc, argv);
    while ((id = cli_next(&p, &val)) != CLI_DONE) {
        if (id == CLI_STOP)
            return p.status;
        if (id == CLI_OPERAND)
            return cli_fail_usage(&p, "unexpected argument '%s'", val);
        fmt = cli_output_parse(val);
    }
    doc = version_doc();
    if (doc == NULL)
        return cli_fail(&p, "out of memory");
    if (fmt != CLI_OUTPUT_TEXT) {
        rc = cli_output_write(stdout, fmt, doc, &msg);
    } else {
        const char *key;
        json_t *v;
        printf("sluice %s\n%-12s %s\n%-12s %s\n%-12s %s\n", SLUICE_VERSION, "commit",
               sluice_git_commit, "built", sluice_build_date, "compiler",
               json_string_value(json_object_get(doc, "compiler")));
        libs = json_object_get(doc, "libraries");
        json_object_foreach(libs, key, v)
        {
            if (strcmp(key, "libcurlTLS") != 0)
                printf("%-12s %s\n", key, json_string_value(v));
            if (strcmp(key, "libcurl") == 0)
                printf("%-12s %s\n", "  with TLS",
                       json_string_value(json_object_get(libs, "libcurlTLS")));
        }
        rc =
            fflush(stdout) == 0 && !ferror(stdout) ? ERR_OK : err_set(&msg, ERR_IO, "write failed");
    }
    json_decref(doc);
    if (rc != ERR_OK)
        return cli_fail(&p, "standard output: %s", msg.text);
    return 0;
}

const cli_cmd_t cmd_version = {"version",
                               "print the version, commit, build date and libraries",
                               version_run,
                               version_opts,
                               ARRAY_SIZE(version_opts),
                               NULL,
                               NULL,
                               usage};
