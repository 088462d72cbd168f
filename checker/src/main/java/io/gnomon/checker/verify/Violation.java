package io.gnomon.checker.verify;

/**
 * One violated invariant, with a witness: the smallest set of facts from the history that shows it, in words.
 *
 * @param kind what was violated, such as {@code replay-mismatch} or {@code feed-missing}
 * @param witness the facts, explained ("T12 read k=7 as 3 at coordinate C; as of C the history says 4, ...")
 */
public record Violation(String kind, String witness) {}
