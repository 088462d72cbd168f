package io.gnomon.internal;

import io.gnomon.InvalidArgumentException;

/** Checks of the arguments of Gnomon's calls that the database does not check itself. */
public final class Args {
  private Args() {}

  /**
   * The value, or an {@link InvalidArgumentException} (GN021) naming the argument and what to pass instead: a null
   * argument of a call is bad input, reported as the database reports it, not a {@link NullPointerException} from
   * deep inside.
   *
   * @param what the argument, as the message names it ("the coordinate")
   * @param instead what to pass instead, for the hint
   */
  public static <T> T required(T value, String what, String instead) {
    if (value == null) {
      throw new InvalidArgumentException(what + " is null\n  Hint: " + instead, null);
    }
    return value;
  }
}
