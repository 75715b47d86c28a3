/* A shared object that is not a libasc module. */
__attribute__((visibility("default"))) int not_a_module = 1;
