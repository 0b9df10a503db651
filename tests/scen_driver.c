/* scen_driver.c: runs `quadnav scen` without the main tool, for the
** 'movingai' test suite. Usage: scen_driver FILE.map.scen [options]. */
#include "tool.h"

int main(int argc, char **argv) {
    static char name[] = "scen";
    argv[0] = name;
    return qn_tool_scen(argc, argv);
}
