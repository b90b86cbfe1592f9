// SPDX-License-Identifier: MIT
// The list forms of exec: MODE "l" (execl), "lp" (execlp, found through PATH) or "le" (execle,
// with an environment of its own that holds only FOO=le) replace this program with /bin/sh,
// which writes MODE (for "le": $FOO) into DIR/exec.txt.
//
//   exec_list_sample DIR MODE
#include <stdio.h>
#include <string.h>
#include <unistd.h>

int main(int argc, char** argv) {
    if (argc != 3) return 2;
    char path[4200];
    snprintf(path, sizeof(path), "%s/exec.txt", argv[1]);
    const char* mode = argv[2];
    if (strcmp(mode, "l") == 0)
        execl("/bin/sh", "sh", "-c", "printf %s \"$1\" > \"$0\"", path, mode, (char*)NULL);
    else if (strcmp(mode, "lp") == 0)
        execlp("sh", "sh", "-c", "printf %s \"$1\" > \"$0\"", path, mode, (char*)NULL);
    else if (strcmp(mode, "le") == 0) {
        char* env[] = {"FOO=le", NULL};
        execle("/bin/sh", "sh", "-c", "printf %s \"$FOO\" > \"$0\"", path, (char*)NULL, env);
    }
    return 1; // exec failed or unknown mode
}
