package io.gnomon.feed.internal;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import org.junit.jupiter.api.Test;

class PageStatementTest {
  @Test
  void eachParameterOutsideQuotesBecomesATypedPlaceholder() {
    PageStatement p = PageStatement.of(
        "select format('v1:%s:$1', $15), $1, \"a$2\".x from gnomon_t.t_page($1, $11, $19) where '''$3' = $18");
    assertEquals("select format('v1:%s:$1', (?::bigint)), (?::pg_snapshot), \"a$2\".x from gnomon_t.t_page("
        + "(?::pg_snapshot), (?::bigint), (?::text)) where '''$3' = (?::gnomon.point)", p.sql());
    assertArrayEquals(new int[] {15, 1, 1, 11, 19, 18}, p.parameters());
  }

  @Test
  void aParameterOutOfRangeIsRefused() {
    assertThrows(IllegalStateException.class, () -> PageStatement.of("select $20"));
    assertThrows(IllegalStateException.class, () -> PageStatement.of("select $0"));
  }
}
