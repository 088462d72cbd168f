package io.gnomon.feed;

/** What a change event did to its row, with Debezium's one-letter codes. */
public enum Operation {
  /** A row was inserted ({@code c}): no before image. */
  CREATE("c"),
  /** A row was updated ({@code u}). */
  UPDATE("u"),
  /** A row was deleted ({@code d}): no after image. */
  DELETE("d"),
  /** A row read by a backfill ({@code r}): its state at the consumer's start coordinate, as {@code after}. */
  READ("r");

  private final String code;

  Operation(String code) {
    this.code = code;
  }

  /** The one-letter code: {@code c}, {@code u}, {@code d} or {@code r}. */
  public String code() {
    return code;
  }

  // the codes above, indexed by their one character: a page looks one up per event
  private static final Operation[] BY_CODE = new Operation[128];

  static {
    for (Operation o : values()) {
      BY_CODE[o.code.charAt(0)] = o;
    }
  }

  /** The operation with this code. */
  public static Operation of(String code) {
    Operation o = code != null && code.length() == 1 && code.charAt(0) < 128 ? BY_CODE[code.charAt(0)] : null;
    if (o == null) {
      throw new IllegalArgumentException("no change-event operation has code " + code);
    }
    return o;
  }
}
