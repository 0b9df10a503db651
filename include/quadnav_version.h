/*
** quadnav version, kept in step with meson.build's project version (the
** `version` test checks the two agree). Committed, not generated, so the
** sources build with any build system.
*/
#ifndef QUADNAV_VERSION_H
#define QUADNAV_VERSION_H

#define QN_VERSION_MAJOR 0
#define QN_VERSION_MINOR 1
#define QN_VERSION_PATCH 0
#define QN_VERSION_STRING "0.1.0"
#define QN_VERSION_NUMBER (QN_VERSION_MAJOR * 10000 + QN_VERSION_MINOR * 100 + QN_VERSION_PATCH)

#endif
