#include "tool.h"
