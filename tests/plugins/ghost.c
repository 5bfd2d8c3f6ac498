/* A library that the ghost-dependent test plugin links against but that is never on
 * the loader's path at run time: a real missing DT_NEEDED entry. */
int blobrt_ghost_function(void) { return 7; }
