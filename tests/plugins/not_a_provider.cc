// A shared library that is not a brt provider (no entry symbol).
extern "C" int brt_test_unrelated_function() { return 7; }
