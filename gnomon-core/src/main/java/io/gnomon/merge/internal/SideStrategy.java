package io.gnomon.merge.internal;

import io.gnomon.merge.Column;
import io.gnomon.merge.ColumnType;
import io.gnomon.merge.Conflict;
import io.gnomon.merge.Resolution;
import io.gnomon.merge.Resolved;
import io.gnomon.merge.Strategy;

/** {@code fail}, {@code ours} and {@code theirs}, for every type. */
public final class SideStrategy implements Strategy {
  public static final SideStrategy FAIL = new SideStrategy("fail");
  public static final SideStrategy OURS = new SideStrategy("ours");
  public static final SideStrategy THEIRS = new SideStrategy("theirs");

  private final String name;

  private SideStrategy(String name) {
    this.name = name;
  }

  @Override
  public String name() {
    return name;
  }

  @Override
  public boolean supports(ColumnType type) {
    return true;
  }

  @Override
  public Resolution resolve(Column column, Object base, Object ours, Object theirs) {
    if (this == OURS) {
      return new Resolved(ours);
    }
    if (this == THEIRS) {
      return new Resolved(theirs);
    }
    return new Conflict(column.name(), base, ours, theirs, name,
        "both sides changed " + column.name() + " differently and its strategy is fail");
  }

  @Override
  public String toString() {
    return name;
  }
}
