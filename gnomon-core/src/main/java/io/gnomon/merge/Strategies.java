package io.gnomon.merge;

import io.gnomon.merge.internal.CounterStrategy;
import io.gnomon.merge.internal.CustomStrategy;
import io.gnomon.merge.internal.ExtremeStrategy;
import io.gnomon.merge.internal.JsonStrategy;
import io.gnomon.merge.internal.SideStrategy;
import io.gnomon.merge.internal.TextStrategy;
import io.gnomon.merge.internal.UnionStrategy;
import java.util.List;
import java.util.Objects;
import java.util.Optional;

/** The built-in merge strategies, and custom ones. docs/merge.md gives each one's exact rule. */
public final class Strategies {
  /** The names {@link #byName(String)} knows, in the order the docs list them. */
  public static final List<String> NAMES =
      List.of("fail", "ours", "theirs", "counter", "max", "min", "union", "json", "text");

  private Strategies() {}

  /** {@code fail}, the default: a change on both sides is a conflict. */
  public static Strategy fail() {
    return SideStrategy.FAIL;
  }

  /** {@code ours}: a change on both sides keeps the target's value. */
  public static Strategy ours() {
    return SideStrategy.OURS;
  }

  /** {@code theirs}: a change on both sides takes the source's value. */
  public static Strategy theirs() {
    return SideStrategy.THEIRS;
  }

  /**
   * {@code counter}, for integers and numerics: {@code base + (ours − base) + (theirs − base)}, computed exactly; a
   * result outside the column's type (the int2/int4/int8 range, or numeric's declared precision) is a conflict.
   */
  public static Strategy counter() {
    return CounterStrategy.INSTANCE;
  }

  /** {@code max}, for integers, numerics and text: the larger of ours and theirs (NULL loses). */
  public static Strategy max() {
    return ExtremeStrategy.MAX;
  }

  /** {@code min}, for integers, numerics and text: the smaller of ours and theirs (NULL loses). */
  public static Strategy min() {
    return ExtremeStrategy.MIN;
  }

  /** {@code union}, for arrays: additions from both sides are kept and removals on either side remove. */
  public static Strategy union() {
    return UnionStrategy.INSTANCE;
  }

  /** {@code json} with {@link JsonOptions#defaults()}: a recursive three-way merge of objects, key by key. */
  public static Strategy json() {
    return json(JsonOptions.defaults());
  }

  /** {@code json} with the given limits and array rule. */
  public static Strategy json(JsonOptions options) {
    return new JsonStrategy(Objects.requireNonNull(options, "options"));
  }

  /** {@code text}: a line-based three-way merge against the base, like diff3. */
  public static Strategy text() {
    return TextStrategy.INSTANCE;
  }

  /** A custom strategy named {@code name} that calls {@code function} for every column changed on both sides. */
  public static Strategy custom(String name, MergeFunction function) {
    return new CustomStrategy(name, function);
  }

  /** The built-in strategy of that name ({@link #NAMES}), with default options. */
  public static Optional<Strategy> byName(String name) {
    return Optional.ofNullable(
        switch (name) {
          case "fail" -> fail();
          case "ours" -> ours();
          case "theirs" -> theirs();
          case "counter" -> counter();
          case "max" -> max();
          case "min" -> min();
          case "union" -> union();
          case "json" -> json();
          case "text" -> text();
          default -> null;
        });
  }
}
