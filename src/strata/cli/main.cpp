#include <cstdio>
int main() { std::puts("strata"); }
