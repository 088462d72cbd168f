package io.gnomon.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.util.Arrays;
import java.util.List;
import org.junit.jupiter.api.Test;

/** The psql-style table: checked against what psql 15 printed for the same rows. */
class ResultTableTest {

  @Test
  void printsAsPsqlDoes() {
    ResultTable t = new ResultTable(
        List.of("id", "owner", "balance", "n", "b", "big", "centered_header_long"),
        List.of(true, false, true, false, false, true, false),
        List.of(
            Arrays.asList("1", "alice", "100.5", null, "t", "12345678901", "x"),
            Arrays.asList("22", "bo", "5", "z", "f", "1", "y")));
    // psql -c "select ..." on PostgreSQL 15, trailing spaces removed
    assertEquals(List.of(
        " id | owner | balance | n | b |     big     | centered_header_long",
        "----+-------+---------+---+---+-------------+----------------------",
        "  1 | alice |   100.5 |   | t | 12345678901 | x",
        " 22 | bo    |       5 | z | f |           1 | y",
        "(2 rows)"), t.lines());
  }

  @Test
  void oneRowAndNoRows() {
    ResultTable one = new ResultTable(List.of("track"), List.of(true), List.of(List.of("1")));
    assertEquals(List.of(" track", "-------", "     1", "(1 row)"), one.lines());
    ResultTable none = new ResultTable(List.of("id"), List.of(true), List.of());
    assertEquals(List.of(" id", "----", "(0 rows)"), none.lines());
  }

  @Test
  void commandTags() {
    assertEquals("INSERT 0 3", Transcript.commandTag("insert into t values (1), (2), (3);", 3));
    assertEquals("UPDATE 1", Transcript.commandTag("update t set x = 1;", 1));
    assertEquals("CREATE TABLE", Transcript.commandTag("create table t (id int);", 0));
    assertEquals("ALTER TABLE", Transcript.commandTag("alter table t add column y int;", 0));
  }
}
