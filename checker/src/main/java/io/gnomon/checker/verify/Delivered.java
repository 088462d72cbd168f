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
 * @param images whether the event was stored with its row images (then {@code before} and {@code after} are checked)
 * @param before the value ({@code v}) of the row image before the change, null when the event has no such image
 * @param after the value of the row image after the change, null when the event has no such image
 */
public record Delivered(long n, int tbl, long key, long xid, long vid, char op, long tick, boolean images, Long before,
    Long after) {
  /** An event stored without its images. */
  public Delivered(long n, int tbl, long key, long xid, long vid, char op, long tick) {
    this(n, tbl, key, xid, vid, op, tick, false, null, null);
  }
}
