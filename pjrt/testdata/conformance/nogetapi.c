/*
 * nogetapi.c - a shared library that is NOT a PJRT plugin: it exports no
 * GetPjrtApi symbol. Used by the "plugin without GetPjrtApi" loader tests.
 */
__attribute__((visibility("default"))) int not_pjrt(void) { return 42; }
