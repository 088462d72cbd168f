package io.gnomon.checker.verify;

/**
 * One row of a tracked table's history as the verifier reads it back.
 *
 * @param tbl the table's number
 * @param vid the version key
 * @param xid the writing transaction's 64-bit id
 * @param op {@code I}, {@code U} or {@code D}
 * @param key the row's key
 * @param before the value in the version's before-image; null for an insert
 */
public record Version(int tbl, long vid, long xid, char op, long key, Long before) {}
