/* Native tests of c-restart-filter's logic:
 *   cc -I ../../sdk/c -o test test_restarts.c restarts.c ../../sdk/c/grw_json.c && ./test */
#include <string.h>

#include "grw_test.h"
#include "restarts.h"

static uint64_t restarts(const char *json) { return restarts_in(json, strlen(json)); }

static bool config(const char *json, uint64_t *min, char *error) {
    return restarts_config(json, strlen(json), min, error, 200);
}

int main(void) {
    CHECK(restarts("[{\"name\":\"web\",\"restartCount\":3},{\"name\":\"log\",\"restartCount\":4}]") == 7);
    CHECK(restarts("[]") == 0);
    CHECK(restarts("[{\"name\":\"web\"}]") == 0);
    /* Not counts: negative, fractions, strings; not a list at all. */
    CHECK(restarts("[{\"restartCount\":-2},{\"restartCount\":1.5},{\"restartCount\":\"3\"}]") == 0);
    CHECK(restarts("{\"restartCount\":3}") == 0);
    CHECK(restarts("[{\"restartCount\":2},") == 0);

    uint64_t min = 0;
    char error[200] = "";
    CHECK(config("{\"minRestarts\": 3}", &min, error) && min == 3);
    CHECK(config("", &min, error) && min == 1);
    CHECK(config("{}", &min, error) && min == 1);
    CHECK(!config("{\"minRestarts\": -1}", &min, error));
    CHECK(strcmp(error, "config key `minRestarts`: expected an integer >= 0, not `-1`") == 0);
    CHECK(!config("{\"minRestart\": 2}", &min, error));
    CHECK(strcmp(error, "config is not valid: unknown field `minRestart`, expected `minRestarts`") == 0);
    CHECK(!config("{\"minRestarts\": ", &min, error));
    CHECK(strcmp(error, "config is not valid JSON") == 0);
    CHECK(!config("[3]", &min, error));
    CHECK(strcmp(error, "config is not valid: expected a JSON object") == 0);

    return grw_test_done("c-restart-filter");
}
