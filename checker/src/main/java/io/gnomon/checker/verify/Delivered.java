package io.gnomon.checker.verify;

/**
 * One change event the checker's feed consumer received and stored, in the transaction that acknowledged it.
 *
 * @param n its place in the order of delivery
 * @param tbl the table's number
 * @param key the row's key
 * @param xid the writing transaction's 64-bit id
 * @param vid the version key
 * @param op {@code I}, {@code U} or {@code D}
 * @param tick the tick whose batch held it
 */
public record Delivered(long n, int tbl, long key, long xid, long vid, char op, long tick) {}
