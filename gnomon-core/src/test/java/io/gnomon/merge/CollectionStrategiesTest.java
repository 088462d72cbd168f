package io.gnomon.merge;

import static io.gnomon.merge.MergeAssertions.assertResolved;
import static io.gnomon.merge.MergeAssertions.conflictsBothWays;
import static io.gnomon.merge.MergeAssertions.json;
import static io.gnomon.merge.MergeAssertions.resolves;
import static io.gnomon.merge.MergeAssertions.resolvesBothWays;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.util.List;
import org.junit.jupiter.api.Test;

/** union, json and text, with hand-picked cases in both directions. */
class CollectionStrategiesTest {
  private static final ColumnType INTS = ColumnType.arrayOf(ColumnType.int4());
  private static final ColumnType TAGS = ColumnType.arrayOf(ColumnType.text());

  @Test
  void unionKeepsBaseOrderThenOursThenTheirs() {
    Column c = Column.of("tags", TAGS);
    Resolution r = Merge.column(c, Strategies.union(), List.of("a", "b", "c"), List.of("a", "x", "b", "c"),
        List.of("c", "a", "y"));
    // b removed by theirs; x added by ours, y by theirs; base order for kept elements
    assertEquals(List.of("a", "c", "x", "y"), ((Resolved) r).value());
    Resolution mirrored = Merge.column(c, Strategies.union(), List.of("a", "b", "c"), List.of("c", "a", "y"),
        List.of("a", "x", "b", "c"));
    assertEquals(List.of("a", "c", "y", "x"), ((Resolved) mirrored).value());
  }

  @Test
  void unionRules() {
    resolvesBothWays(Strategies.union(), INTS, List.of(1L, 2L), List.of(1L, 2L, 3L), List.of(1L, 2L, 3L, 4L),
        List.of(1L, 2L, 3L, 4L)); // both added 3: once
    resolvesBothWays(Strategies.union(), INTS, List.of(1L, 2L, 3L), List.of(1L), List.of(1L, 2L), List.of(1L));
    resolves(Strategies.union(), INTS, null, List.of(1L), List.of(2L), List.of(1L, 2L), List.of(2L, 1L));
    // duplicates are counted: ours added a second 1, theirs removed 2
    resolvesBothWays(Strategies.union(), INTS, List.of(1L, 2L), List.of(1L, 2L, 1L), List.of(1L),
        List.of(1L, 1L));
    // one side adds a copy, the other removes one: both deltas apply
    resolvesBothWays(Strategies.union(), INTS, List.of(5L, 5L), List.of(5L, 5L, 5L), List.of(5L, 6L),
        List.of(5L, 5L, 6L));
    conflictsBothWays(Strategies.union(), INTS, List.of(1L), null, List.of(1L, 2L));
  }

  @Test
  void unionRefusesMultiDimensionalArraysAsAConflict() {
    // (an int[] column may hold a 2-D value: PostgreSQL's array types do not fix the dimensions)
    Conflict c = conflictsBothWays(Strategies.union(), INTS, List.of(List.of(1L, 2L)),
        List.of(List.of(1L, 2L), List.of(3L, 4L)), List.of(List.of(1L, 2L), List.of(5L, 6L)));
    assertEquals("union merges one-dimensional arrays only, and ours has 2 dimensions", c.reason());
    Conflict theirs = conflictsBothWays(Strategies.union(), INTS, List.of(1L), List.of(1L, 2L),
        List.of(List.of(1L, 3L)));
    assertEquals("union merges one-dimensional arrays only, and theirs has 2 dimensions", theirs.reason());
    Conflict base = conflictsBothWays(Strategies.union(), INTS, List.of(List.of(List.of(1L))), List.of(1L, 2L),
        List.of(1L, 3L));
    assertEquals("union merges one-dimensional arrays only, and base has 3 dimensions", base.reason());
  }

  @Test
  void jsonMergesKeyByKey() {
    ColumnType j = ColumnType.json();
    resolvesBothWays(Strategies.json(), j, json("{'a':1,'b':{'x':1,'y':2},'c':3}"),
        json("{'a':2,'b':{'x':1,'y':2},'c':3,'d':4}"), json("{'a':1,'b':{'x':1,'y':5},'e':[1]}"),
        json("{'a':2,'b':{'x':1,'y':5},'d':4,'e':[1]}"));
    // both add the same nested object key: an insert against insert merges over an empty base
    resolvesBothWays(Strategies.json(), j, json("{}"), json("{'n':{'p':1}}"), json("{'n':{'q':2}}"),
        json("{'n':{'p':1,'q':2}}"));
    // numbers by value
    resolvesBothWays(Strategies.json(), j, json("{'a':1}"), json("{'a':1.0,'b':1}"), json("{'a':1}"),
        json("{'a':1,'b':1}"));
  }

  @Test
  void jsonNestedConflictsNamePaths() {
    ColumnType j = ColumnType.json();
    Conflict c = conflictsBothWays(Strategies.json(), j, json("{'a':{'b':{'c':1}},'k':0}"),
        json("{'a':{'b':{'c':2}},'k':0}"), json("{'a':{'b':{'c':3}},'k':1}"));
    assertTrue(c.reason().contains("$.a.b.c"), c.reason());
    Conflict removed = conflictsBothWays(Strategies.json(), j, json("{'a':{'x':1}}"), json("{}"),
        json("{'a':{'x':2}}"));
    assertTrue(removed.reason().contains("$.a"), removed.reason());
    Conflict arrays = conflictsBothWays(Strategies.json(), j, json("{'l':[1]}"), json("{'l':[1,2]}"),
        json("{'l':[1,3]}"));
    assertTrue(arrays.reason().contains("$.l"), arrays.reason());
    Conflict odd = conflictsBothWays(Strategies.json(), j, json("{'we ird':1}"), json("{'we ird':2}"),
        json("{'we ird':3}"));
    assertTrue(odd.reason().contains("$[\"we ird\"]"), odd.reason());
    conflictsBothWays(Strategies.json(), j, json("1"), json("2"), json("3"));
  }

  @Test
  void jsonArraysAsSetsWhenDeclared() {
    Strategy sets = Strategies.json(JsonOptions.defaults().withArraysAsSets(true));
    resolves(sets, ColumnType.json(), json("{'l':[1,2]}"), json("{'l':[1,2,3]}"), json("{'l':[2,4]}"),
        json("{'l':[2,3,4]}"), json("{'l':[2,4,3]}"));
  }

  @Test
  void jsonLimitsAreClearErrors() {
    JsonNodeFactory f = JsonNodeFactory.instance;
    ObjectNode deep = f.objectNode();
    ObjectNode cur = deep;
    for (int i = 0; i < 100_000; i++) { // far deeper than any stack would survive recursively
      cur = cur.putObject("a");
    }
    Column c = Column.of("doc", ColumnType.json());
    MergeLimitExceededException e = assertThrows(MergeLimitExceededException.class,
        () -> Merge.column(c, Strategies.json(), json("{}"), deep, json("{'b':1}")));
    assertTrue(e.getMessage().contains("deeper than 64") && e.getMessage().contains("doc"), e.getMessage());
    // equal hostile sides converge without a recursive walk
    assertResolved(deep, Merge.column(c, Strategies.json(), json("{}"), deep, deep), "deep, same on both sides");

    ArrayNode wide = f.arrayNode();
    for (int i = 0; i < 200; i++) {
      wide.add(i);
    }
    Strategy small = Strategies.json(JsonOptions.defaults().withLimits(64, 100));
    MergeLimitExceededException size = assertThrows(MergeLimitExceededException.class,
        () -> Merge.column(c, small, json("{}"), f.objectNode().set("w", wide), json("{'b':1}")));
    assertTrue(size.getMessage().contains("more than 100 JSON nodes"), size.getMessage());
    Strategy shallow = Strategies.json(JsonOptions.defaults().withLimits(2, 100));
    assertResolved(json("{'a':{'b':1},'c':2}"),
        Merge.column(c, shallow, json("{}"), json("{'a':{'b':1}}"), json("{'c':2}")), "depth 2 is allowed");
    assertThrows(MergeLimitExceededException.class,
        () -> Merge.column(c, shallow, json("{}"), json("{'a':{'b':{'c':1}}}"), json("{'c':2}")));
    assertThrows(IllegalArgumentException.class, () -> JsonOptions.defaults().withLimits(0, 1));
  }

  @Test
  void textCombinesSeparateEdits() {
    ColumnType t = ColumnType.text();
    String base = "one\ntwo\nthree\nfour\nfive\n";
    resolvesBothWays(Strategies.text(), t, base, "ONE\ntwo\nthree\nfour\nfive\n", "one\ntwo\nthree\nfour\nFIVE\n",
        "ONE\ntwo\nthree\nfour\nFIVE\n");
    // an insertion and a deletion with an unchanged line between them
    resolvesBothWays(Strategies.text(), t, base, "one\ntwo\nthree\nfour\n", "zero\none\ntwo\nthree\nfour\nfive\n",
        "zero\none\ntwo\nthree\nfour\n");
    // identical edits converge even with other edits around them
    resolvesBothWays(Strategies.text(), t, base, "one\nTWO\nthree\nfour\nFIVE\n", "ONE\none\nTWO\nthree\nfour\nfive\n",
        "ONE\none\nTWO\nthree\nfour\nFIVE\n");
    // the last line without a newline is a line
    resolvesBothWays(Strategies.text(), t, "a\nb\nc", "A\nb\nc", "a\nb\nC", "A\nb\nC");
    resolvesBothWays(Strategies.text(), t, null, "x\n", "x\n", "x\n");
  }

  @Test
  void textOverlappingAndAdjacentEditsConflict() {
    ColumnType t = ColumnType.text();
    String base = "one\ntwo\nthree\nfour\n";
    Conflict overlap = conflictsBothWays(Strategies.text(), t, base, "one\n2\nthree\nfour\n", "one\ndeux\nthree\nfour\n");
    assertTrue(overlap.reason().contains("base lines 2 changed differently"), overlap.reason());
    // adjacent: ours changes line 2, theirs line 3; no unchanged line between them
    Conflict adjacent = conflictsBothWays(Strategies.text(), t, base, "one\n2\nthree\nfour\n", "one\ntwo\n3\nfour\n");
    assertTrue(adjacent.reason().contains("base lines 2–3"), adjacent.reason());
    // two different insertions at the same place
    Conflict inserted = conflictsBothWays(Strategies.text(), t, base, "one\nA\ntwo\nthree\nfour\n",
        "one\nB\ntwo\nthree\nfour\n");
    assertTrue(inserted.reason().contains("inserted after base line 1"), inserted.reason());
    // a deletion overlapping an edit
    conflictsBothWays(Strategies.text(), t, base, "one\nfour\n", "one\ntwo\nTHREE\nfour\n");
    // the newline at the end is part of the last line
    conflictsBothWays(Strategies.text(), t, "a\nb", "a\nb\n", "a\nc");
    // with one unchanged line between them, the same edits merge
    resolvesBothWays(Strategies.text(), t, base, "one\n2\nthree\nfour\n", "one\ntwo\nthree\n4\n",
        "one\n2\nthree\n4\n");
  }

  @Test
  void jsonValuesMustBeJsonNodes() {
    Column c = Column.of("doc", ColumnType.json());
    assertThrows(IllegalArgumentException.class,
        () -> Merge.column(c, Strategies.json(), "{}", "{\"a\":1}", "{\"b\":1}"));
    JsonNode n = json("{'a':1}");
    assertResolved(n, Merge.column(c, Strategies.json(), n, n, n), "identity");
  }
}
