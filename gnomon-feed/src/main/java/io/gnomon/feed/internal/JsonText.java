package io.gnomon.feed.internal;

import com.fasterxml.jackson.core.SerializableString;
import java.io.IOException;
import java.io.OutputStream;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;

/**
 * A JSON value as text, kept as the UTF-8 bytes the database sent (or as a {@code String} a caller gave), the other
 * form made only when asked for. As a {@link SerializableString} it is written by {@link
 * com.fasterxml.jackson.core.JsonGenerator#writeRawValue(SerializableString)}: a UTF-8 generator copies the bytes
 * into its buffer (no decoding into a {@code String}, no encoding back), a character generator the text.
 *
 * <p>The bytes are never modified: the array a caller passes is kept, not copied, and must not change afterwards.
 */
public final class JsonText implements SerializableString {
  private volatile String text;
  private volatile byte[] utf8;

  private JsonText(String text, byte[] utf8) {
    this.text = text;
    this.utf8 = utf8;
  }

  /** The text; null stays null. */
  public static JsonText of(String text) {
    return text == null ? null : new JsonText(text, null);
  }

  /** The UTF-8 bytes of a JSON text, kept (not copied); null stays null. */
  public static JsonText ofUtf8(byte[] utf8) {
    return utf8 == null ? null : new JsonText(null, utf8);
  }

  /** The UTF-8 bytes (the array itself: do not modify it). */
  public byte[] utf8() {
    byte[] b = utf8;
    if (b == null) {
      b = text.getBytes(StandardCharsets.UTF_8);
      utf8 = b;
    }
    return b;
  }

  @Override
  public String getValue() {
    String t = text;
    if (t == null) {
      t = new String(utf8, StandardCharsets.UTF_8);
      text = t;
    }
    return t;
  }

  @Override
  public String toString() {
    return getValue();
  }

  @Override
  public int charLength() {
    return getValue().length();
  }

  // a raw value is written unquoted: the quoted forms are the unquoted ones (Jackson never quotes a raw value)

  @Override
  public char[] asQuotedChars() {
    return getValue().toCharArray();
  }

  @Override
  public byte[] asUnquotedUTF8() {
    return utf8();
  }

  @Override
  public byte[] asQuotedUTF8() {
    return utf8();
  }

  @Override
  public int appendQuotedUTF8(byte[] buffer, int offset) {
    return appendUnquotedUTF8(buffer, offset);
  }

  @Override
  public int appendQuoted(char[] buffer, int offset) {
    return appendUnquoted(buffer, offset);
  }

  @Override
  public int appendUnquotedUTF8(byte[] buffer, int offset) {
    byte[] b = utf8();
    if (offset + b.length > buffer.length) {
      return -1;
    }
    System.arraycopy(b, 0, buffer, offset, b.length);
    return b.length;
  }

  @Override
  public int appendUnquoted(char[] buffer, int offset) {
    String t = getValue();
    if (offset + t.length() > buffer.length) {
      return -1;
    }
    t.getChars(0, t.length(), buffer, offset);
    return t.length();
  }

  @Override
  public int writeQuotedUTF8(OutputStream out) throws IOException {
    return writeUnquotedUTF8(out);
  }

  @Override
  public int writeUnquotedUTF8(OutputStream out) throws IOException {
    byte[] b = utf8();
    out.write(b);
    return b.length;
  }

  @Override
  public int putQuotedUTF8(ByteBuffer buffer) {
    return putUnquotedUTF8(buffer);
  }

  @Override
  public int putUnquotedUTF8(ByteBuffer buffer) {
    byte[] b = utf8();
    if (b.length > buffer.remaining()) {
      return -1;
    }
    buffer.put(b);
    return b.length;
  }
}
