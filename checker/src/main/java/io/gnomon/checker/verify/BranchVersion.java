package io.gnomon.checker.verify;

/**
 * One row of a branch history ({@code gnomon_t.<base>_bh}) as the verifier reads it back.
 *
 * @param tbl the table's number
 * @param branch the branch's name
 * @param vid the version key
 * @param xid the writing transaction's 64-bit id
 * @param op {@code I} (the write created the branch row) or {@code U} (the branch row from before the write)
 * @param deleted in a {@code U} version: whether the branch row before the write was a delete (a tombstone)
 * @param key the row's key
 * @param before in a {@code U} version: the value before the write (null for a tombstone)
 */
public record BranchVersion(int tbl, String branch, long vid, long xid, char op, boolean deleted, long key,
    Long before) {}
