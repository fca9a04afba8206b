// libedit's readline interface (Debian: libedit-dev), for the line editing and history of
// `cove shell`. Only the command-line tool links libedit; libcove does not.
#ifndef COVE_CLIBEDIT_SHIM_H
#define COVE_CLIBEDIT_SHIM_H
#include <stdio.h>
#include <editline/readline.h>
#endif
