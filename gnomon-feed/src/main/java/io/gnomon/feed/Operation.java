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

  /** The operation with this code. */
  public static Operation of(String code) {
    // a switch, not a search: a page looks one up per event
    return switch (code == null ? "" : code) {
      case "c" -> CREATE;
      case "u" -> UPDATE;
      case "d" -> DELETE;
      case "r" -> READ;
      default -> throw new IllegalArgumentException("no change-event operation has code " + code);
    };
  }
}
