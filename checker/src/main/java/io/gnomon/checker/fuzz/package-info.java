/**
 * The merge fuzzer: random, seeded base/ours/theirs values for every merge strategy of {@code io.gnomon.merge}, checked
 * against the laws of a three-way merge. {@link io.gnomon.checker.fuzz.MergeFuzzer} is the entry point ({@code ./gnomon
 * fuzz} runs it); the generators, laws, shrinker and mutants are package-private.
 */
package io.gnomon.checker.fuzz;
