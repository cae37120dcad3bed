// train/main.cpp — placeholder entry point while the engine comes up.
#include <cstdio>
int main() { return 0; }
