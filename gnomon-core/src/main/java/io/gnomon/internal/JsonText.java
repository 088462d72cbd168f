package io.gnomon.internal;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.DeserializationFeature;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.cfg.JsonNodeFeature;
import com.fasterxml.jackson.databind.json.JsonMapper;

/**
 * Parses the JSON text the database returns (row images, keys, conflicts). Numbers keep their exact decimal value
 * ({@code 100.00} stays {@code 100.00}, wide numerics lose nothing): they become {@code BigDecimal}, never doubles.
 */
public final class JsonText {
  private static final ObjectMapper JSON = JsonMapper.builder()
      .enable(DeserializationFeature.USE_BIG_DECIMAL_FOR_FLOATS, DeserializationFeature.USE_BIG_INTEGER_FOR_INTS)
      .configure(JsonNodeFeature.STRIP_TRAILING_BIGDECIMAL_ZEROES, false)
      .build();

  private JsonText() {}

  /** The parsed value, or null for SQL NULL. */
  public static JsonNode parse(String text) {
    if (text == null) {
      return null;
    }
    try {
      return JSON.readTree(text);
    } catch (JsonProcessingException e) {
      throw Jdbc.failure("the database returned malformed JSON: " + text, e);
    }
  }
}
