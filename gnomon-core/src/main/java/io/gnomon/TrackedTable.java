package io.gnomon;

import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.time.OffsetDateTime;
import java.util.HexFormat;
import java.util.List;

/**
 * A table Gnomon tracks, as its catalog row {@code gnomon.tracked_table} describes it.
 *
 * @param id Gnomon's id for the table
 * @param schema the table's schema
 * @param name the table's name
 * @param keyColumns the primary-key columns, in key order
 * @param historyTable the history table, in schema {@code gnomon_t}
 * @param asOfFunction the generated as-of function, in schema {@code gnomon_t}: {@code gnomon_t.<fn>(coordinate text)}
 *     and {@code gnomon_t.<fn>(at timestamptz)}
 * @param trackedAt when tracking began; there is no history before it
 * @param baseName the base of the names of the table's generated objects in schema {@code gnomon_t}
 */
public record TrackedTable(
    int id,
    String schema,
    String name,
    List<String> keyColumns,
    String historyTable,
    String asOfFunction,
    OffsetDateTime trackedAt,
    String baseName) {

  /** Copies the key list. */
  public TrackedTable {
    keyColumns = List.copyOf(keyColumns);
  }

  /** The table's qualified name as SQL, for example {@code "public"."accounts"}. */
  public String qualifiedName() {
    return quote(schema) + "." + quote(name);
  }

  /** The as-of function's qualified name as SQL, for example {@code gnomon_t."accounts_as_of"}. */
  public String asOfFunctionSql() {
    return "gnomon_t." + quote(asOfFunction);
  }

  /**
   * The read function's qualified name as SQL, for example {@code gnomon_t."accounts_at"}: the table at a
   * {@code gnomon.point} (main or a branch, now or as of a coordinate).
   */
  public String atFunctionSql() {
    return "gnomon_t." + quote(generatedName("_at"));
  }

  /** The qualified name of the table's branch view, for example {@code "gnomon_b_public"."accounts"}. */
  public String branchViewSql() {
    return quote(branchSchema(schema)) + "." + quote(name);
  }

  /** The branch-view schema of a table in {@code schema}: the SQL function gnomon.branch_schema's rule. */
  static String branchSchema(String schema) {
    return generatedName("gnomon_b_" + schema, "");
  }

  private String generatedName(String suffix) {
    return generatedName(baseName, suffix);
  }

  /** gnomon.object_name: base || suffix, shortened with a hash of base to fit PostgreSQL's 63 bytes. */
  static String generatedName(String base, String suffix) {
    if ((base + suffix).getBytes(StandardCharsets.UTF_8).length <= 63) {
      return base + suffix;
    }
    String b = base;
    while ((b + suffix).getBytes(StandardCharsets.UTF_8).length > 63 - 9) {
      b = b.substring(0, b.offsetByCodePoints(b.length(), -1));
    }
    return b + "_" + md5(base).substring(0, 8) + suffix;
  }

  private static String md5(String s) {
    try {
      byte[] d = MessageDigest.getInstance("MD5").digest(s.getBytes(StandardCharsets.UTF_8));
      return HexFormat.of().formatHex(d);
    } catch (NoSuchAlgorithmException e) {
      throw new IllegalStateException("MD5 is missing from this JVM", e);
    }
  }

  static String quote(String identifier) {
    return '"' + identifier.replace("\"", "\"\"") + '"';
  }
}
