package io.gnomon;

import io.gnomon.internal.Args;
import io.gnomon.internal.Jdbc;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.time.OffsetDateTime;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;

/**
 * Branch lifecycle: create, list, describe, rename, drop. Each call is one round trip to the SQL functions
 * {@code gnomon.branch_*} (see docs/branches.md). Creating a branch writes one catalog row: it copies nothing.
 *
 * <pre>{@code
 * gnomon.branches().create("feature");                                  // from main, now, logged
 * gnomon.branches().create("try-1", "feature", Optional.of(c), true);   // from feature as of c, scratch
 * }</pre>
 */
public final class Branches {
  private final Gnomon gnomon;

  Branches(Gnomon gnomon) {
    this.gnomon = gnomon;
  }

  /** Creates a logged branch of main, now. */
  public Branch create(String name) {
    return create(name, Point.MAIN, Optional.empty(), false);
  }

  /**
   * Creates a branch.
   *
   * @param name the new branch's name (1 to 200 characters, not {@code main})
   * @param parent {@code "main"} or an existing branch
   * @param at the coordinate on the parent to start from, or empty for now
   * @param scratch true for a scratch (unlogged) branch: cheaper writes, emptied by a crash
   * @throws BranchExistsException, BranchNotFoundException (no such parent), CoordinateInFutureException,
   *     CoordinateTooOldException (before the parent branch was created), InvalidArgumentException
   */
  public Branch create(String name, String parent, Optional<Coordinate> at, boolean scratch) {
    Args.required(at, "the coordinate to create branch " + name + " at", "pass Optional.empty() for now");
    return Jdbc.withConnection(
        gnomon.dataSource(),
        "creating branch " + name,
        c -> {
          try (PreparedStatement ps = c.prepareStatement("select gnomon.branch_create(?, ?, ?, ?)")) {
            ps.setString(1, name);
            ps.setString(2, parent);
            ps.setString(3, at.map(Coordinate::toString).orElse(null));
            ps.setBoolean(4, scratch);
            ps.executeQuery().close();
          }
          return get(c, name);
        });
  }

  /** The branch with this name; throws {@link BranchNotFoundException} when there is none. */
  public Branch get(String name) {
    return Jdbc.withConnection(gnomon.dataSource(), "looking up branch " + name, c -> get(c, name));
  }

  private static Branch get(Connection c, String name) throws SQLException {
    try (PreparedStatement ps = c.prepareStatement("select * from gnomon.branches() where branch_name = ?")) {
      ps.setString(1, name);
      try (ResultSet rs = ps.executeQuery()) {
        if (!rs.next()) {
          throw new BranchNotFoundException(
              "branch '" + name + "' does not exist\n  Hint: list the branches with Gnomon.branches().list()", null);
        }
        return read(rs);
      }
    }
  }

  /** Every branch, by name. */
  public List<Branch> list() {
    return Jdbc.withConnection(
        gnomon.dataSource(),
        "listing branches",
        c -> {
          List<Branch> out = new ArrayList<>();
          try (PreparedStatement ps = c.prepareStatement("select * from gnomon.branches()");
              ResultSet rs = ps.executeQuery()) {
            while (rs.next()) {
              out.add(read(rs));
            }
          }
          return out;
        });
  }

  /** What a branch holds in each tracked table: rows written, deletes, versions, bytes. */
  public List<BranchTableStats> describe(String name) {
    return Jdbc.withConnection(
        gnomon.dataSource(),
        "describing branch " + name,
        c -> {
          List<BranchTableStats> out = new ArrayList<>();
          try (PreparedStatement ps = c.prepareStatement("select * from gnomon.branch_describe(?)")) {
            ps.setString(1, name);
            try (ResultSet rs = ps.executeQuery()) {
              while (rs.next()) {
                out.add(new BranchTableStats(rs.getString(1), rs.getLong(2), rs.getLong(3), rs.getLong(4), rs.getLong(5)));
              }
            }
          }
          return out;
        });
  }

  /** Renames a branch; sessions working on it stay on it. */
  public void rename(String name, String newName) {
    Jdbc.withConnection(
        gnomon.dataSource(),
        "renaming branch " + name,
        c -> {
          try (PreparedStatement ps = c.prepareStatement("select gnomon.branch_rename(?, ?)")) {
            ps.setString(1, name);
            ps.setString(2, newName);
            ps.executeQuery().close();
          }
          return null;
        });
  }

  /** Drops a branch without children, and its rows; see {@link #drop(String, boolean)}. */
  public int drop(String name) {
    return drop(name, false);
  }

  /**
   * Drops a branch and the rows written on it. A branch with descendants is refused ({@link
   * BranchHasChildrenException}) unless {@code cascade}, which drops them too. Returns how many branches went.
   */
  public int drop(String name, boolean cascade) {
    return Jdbc.withConnection(
        gnomon.dataSource(),
        "dropping branch " + name,
        c -> {
          try (PreparedStatement ps = c.prepareStatement("select gnomon.branch_drop(?, ?)")) {
            ps.setString(1, name);
            ps.setBoolean(2, cascade);
            try (ResultSet rs = ps.executeQuery()) {
              rs.next();
              return rs.getInt(1);
            }
          }
        });
  }

  private static Branch read(ResultSet rs) throws SQLException {
    return new Branch(
        rs.getString("branch_name"),
        rs.getInt("branch_id"),
        rs.getString("parent"),
        Coordinate.parse(rs.getString("cutoff")),
        "scratch".equals(rs.getString("kind")) ? Branch.Kind.SCRATCH : Branch.Kind.LOGGED,
        rs.getBoolean("intact"),
        rs.getInt("depth"),
        rs.getObject("created_at", OffsetDateTime.class));
  }
}
