package io.gnomon.merge.internal;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import com.fasterxml.jackson.databind.node.ObjectNode;
import com.fasterxml.jackson.databind.node.TextNode;
import io.gnomon.merge.Column;
import io.gnomon.merge.ColumnType;
import io.gnomon.merge.Conflict;
import io.gnomon.merge.JsonOptions;
import io.gnomon.merge.MergeLimitExceededException;
import io.gnomon.merge.Resolution;
import io.gnomon.merge.Resolved;
import io.gnomon.merge.Strategy;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Set;
import java.util.regex.Pattern;

/**
 * {@code json}: a recursive three-way merge. At every position (the column, then each key of objects present on both
 * sides) the per-column rule applies: equal sides converge, a one-sided change wins (adding or removing a key is a
 * change). When both sides changed a position differently: two objects (over an object base, or no base: an empty
 * one) merge key by key; two arrays merge as {@code union} when {@link JsonOptions#arraysAsSets()}; anything else is a
 * conflict at that path. Key order: the base's keys, then ours' new keys, then theirs'. Any conflict makes the whole
 * column a conflict, whose reason lists the paths.
 */
public final class JsonStrategy implements Strategy {
  private static final JsonNodeFactory NODES = JsonNodeFactory.instance;
  private static final Pattern PLAIN_KEY = Pattern.compile("[A-Za-z_][A-Za-z0-9_]*");
  private static final int PATHS_SHOWN = 5;

  private final JsonOptions options;

  public JsonStrategy(JsonOptions options) {
    this.options = options;
  }

  @Override
  public String name() {
    return "json";
  }

  @Override
  public boolean supports(ColumnType type) {
    return type.kind() == ColumnType.Kind.JSON;
  }

  @Override
  public Resolution resolve(Column column, Object base, Object ours, Object theirs) {
    if (ours == null || theirs == null) {
      return new Conflict(column.name(), base, ours, theirs, name(),
          (ours == null ? "ours" : "theirs") + " set " + column.name() + " to NULL while the other side changed it");
    }
    JsonNode b = base == null ? null : node(column, base);
    JsonNode o = node(column, ours);
    JsonNode t = node(column, theirs);
    int[] budget = {options.maxNodes()};
    check(column, "base", b, budget);
    check(column, "ours", o, budget);
    check(column, "theirs", t, budget);
    List<String> paths = new ArrayList<>();
    JsonNode r = merge(b, o, t, "$", paths);
    if (paths.isEmpty()) {
      return new Resolved(r);
    }
    String shown = String.join(", ", paths.subList(0, Math.min(PATHS_SHOWN, paths.size())));
    return new Conflict(column.name(), base, ours, theirs, name(), "json: both sides changed " + shown
        + (paths.size() > PATHS_SHOWN ? " and " + (paths.size() - PATHS_SHOWN) + " more paths" : "") + " differently");
  }

  /** Merges one position; null means absent (a missing key). Conflicting paths are added to {@code paths}. */
  private JsonNode merge(JsonNode b, JsonNode o, JsonNode t, String path, List<String> paths) {
    if (same(o, t)) {
      return o;
    }
    if (same(o, b)) {
      return t;
    }
    if (same(t, b)) {
      return o;
    }
    if (o != null && t != null && o.isObject() && t.isObject() && (b == null || b.isObject())) {
      return mergeObjects(b == null ? NODES.objectNode() : b, o, t, path, paths);
    }
    if (options.arraysAsSets() && o != null && t != null && o.isArray() && t.isArray() && (b == null || b.isArray())) {
      ArrayNode a = NODES.arrayNode();
      for (Object e : MultisetMerge.merge(elements(b), elements(o), elements(t))) {
        a.add((JsonNode) e);
      }
      return a;
    }
    paths.add(path);
    return o;
  }

  private JsonNode mergeObjects(JsonNode b, JsonNode o, JsonNode t, String path, List<String> paths) {
    Set<String> keys = new LinkedHashSet<>();
    b.fieldNames().forEachRemaining(keys::add);
    o.fieldNames().forEachRemaining(keys::add);
    t.fieldNames().forEachRemaining(keys::add);
    ObjectNode out = NODES.objectNode();
    for (String k : keys) {
      JsonNode v = merge(b.get(k), o.get(k), t.get(k), path(path, k), paths);
      if (v != null) {
        out.set(k, v);
      }
    }
    return out;
  }

  private static List<JsonNode> elements(JsonNode array) {
    List<JsonNode> l = new ArrayList<>();
    if (array != null) {
      array.forEach(l::add);
    }
    return l;
  }

  private static boolean same(JsonNode a, JsonNode b) {
    return a == null ? b == null : b != null && Values.sameJson(a, b);
  }

  private static String path(String parent, String key) {
    return PLAIN_KEY.matcher(key).matches() ? parent + "." + key : parent + "[" + TextNode.valueOf(key) + "]";
  }

  private static JsonNode node(Column column, Object v) {
    if (v instanceof JsonNode n) {
      return n;
    }
    throw new IllegalArgumentException(
        "column " + column.name() + " (" + column.type() + ") holds " + Values.describe(v) + ", not a JsonNode");
  }

  /** Walks a value without recursion; throws when it is deeper than maxDepth or exhausts the node budget. */
  private void check(Column column, String side, JsonNode root, int[] budget) {
    if (root == null) {
      return;
    }
    ArrayDeque<JsonNode> nodes = new ArrayDeque<>();
    ArrayDeque<Integer> depths = new ArrayDeque<>();
    nodes.push(root);
    depths.push(0);
    while (!nodes.isEmpty()) {
      JsonNode n = nodes.pop();
      int depth = depths.pop();
      if (--budget[0] < 0) {
        throw new MergeLimitExceededException("json merge of column " + column.name() + ": base, ours and theirs "
            + "together have more than " + options.maxNodes() + " JSON nodes (JsonOptions.maxNodes, reached in " + side
            + "); raise the limit with Strategies.json(JsonOptions.defaults().withLimits(maxDepth, maxNodes)) if such "
            + "documents are expected");
      }
      if (n.isContainerNode() && n.size() > 0) {
        if (depth + 1 > options.maxDepth()) {
          throw new MergeLimitExceededException("json merge of column " + column.name() + ": " + side
              + " is nested deeper than " + options.maxDepth() + " levels (JsonOptions.maxDepth); raise the limit with"
              + " Strategies.json(JsonOptions.defaults().withLimits(maxDepth, maxNodes)) if such documents are expected");
        }
        for (Iterator<JsonNode> it = n.elements(); it.hasNext(); ) {
          nodes.push(it.next());
          depths.push(depth + 1);
        }
      }
    }
  }

  @Override
  public String toString() {
    return name();
  }
}
