// SPDX-License-Identifier: MIT
// errno around a parent's waits, for the hooks' "the program sees what the real call left" rule:
// a successful waitpid leaves errno as it was (4242 here), a failed one sets ECHILD. Prints both.
#include <errno.h>
#include <stdio.h>
#include <sys/wait.h>
#include <unistd.h>

int main(void) {
    pid_t child = fork();
    if (child == 0) _exit(7);
    int status = 0;
    errno = 4242;
    pid_t got = waitpid(child, &status, 0);
    int afterSuccess = errno;
    errno = 0;
    pid_t none = waitpid(-1, &status, 0);
    int afterFailure = errno;
    printf("reaped %d exit %d errno %d; again %d errno %d\n", got == child, WEXITSTATUS(status), afterSuccess,
           (int)none, afterFailure);
    return 0;
}
