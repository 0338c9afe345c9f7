/** Exit codes shared by the project's command-line programs. */
export const EXIT_OK = 0;
/** Something went wrong at run time (a peer unreachable, a check failed). */
export const EXIT_FAILURE = 1;
/** Bad usage or bad configuration input: nothing was done. */
export const EXIT_BAD_CONFIG = 2;
/**
 * The command needs something this build does not have here: an
 * orchestrator API or a control plane (sysexits.h EX_UNAVAILABLE). Nothing
 * was done; the message says what the command would need.
 */
export const EXIT_UNAVAILABLE = 69;
