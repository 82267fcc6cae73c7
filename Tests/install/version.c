/* version: prints rst_version() and the header's RST_VERSION_STRING, which
 * must be the same (Tests/install/run.sh compares them with the file name,
 * the SONAME and restoration.pc). */
#include <restoration.h>
#include <stdio.h>
#include <string.h>

int main(void) {
    printf("%s %s\n", rst_version(), RST_VERSION_STRING);
    return strcmp(rst_version(), RST_VERSION_STRING) == 0 ? 0 : 1;
}
