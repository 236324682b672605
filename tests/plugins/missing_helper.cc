// Lives in a directory no loader searches, so dlopen of its dependent fails.
extern "C" int brt_test_missing_helper() { return 42; }
