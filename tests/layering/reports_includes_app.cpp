// Must NOT compile with mrct_reports's include roots (every module below app):
// nothing below app uses app.
#include "app/commands.h"
