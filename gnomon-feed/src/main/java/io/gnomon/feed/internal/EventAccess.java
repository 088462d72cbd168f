package io.gnomon.feed.internal;

import com.fasterxml.jackson.databind.ObjectReader;
import io.gnomon.feed.ChangeEvent;
import io.gnomon.feed.FeedPosition;
import io.gnomon.feed.Operation;
import java.time.Instant;

/**
 * What this module's internals reach of a {@link ChangeEvent} without widening its public surface: an event made of
 * {@link JsonText}s, and an event's key and images as {@code JsonText} (null for a part that is a parsed tree only, or
 * absent). {@code ChangeEvent} installs the one implementation when its class is initialised.
 */
public abstract class EventAccess {
  private static volatile EventAccess instance;

  /** For {@code ChangeEvent}'s class initialiser only: a second call fails. */
  protected EventAccess() {
    if (getClass().getEnclosingClass() != ChangeEvent.class) {
      throw new IllegalStateException("EventAccess is implemented by ChangeEvent only");
    }
    synchronized (EventAccess.class) {
      if (instance != null) {
        throw new IllegalStateException("EventAccess is installed once, by ChangeEvent");
      }
      instance = this;
    }
  }

  /** The implementation, ChangeEvent's class initialised first when needed. */
  public static EventAccess get() {
    EventAccess a = instance;
    if (a == null) {
      try {
        Class.forName(ChangeEvent.class.getName(), true, ChangeEvent.class.getClassLoader());
      } catch (ClassNotFoundException e) {
        throw new IllegalStateException(e);
      }
      a = instance;
    }
    return a;
  }

  /**
   * An event of a change whose key and images are JSON texts (parsed with {@code reader} when asked for trees); its
   * {@code id} is its position's text form, exactly as {@code gnomon.feed_read} writes it.
   */
  public abstract ChangeEvent event(String id, Operation op, String relation, String database, String schema,
      String table, JsonText key, JsonText before, JsonText after, FeedPosition position, long tick, Instant tickAt,
      long xid, long vid, String branch, ObjectReader reader);

  /** {@code e.position().toString()}, without making it again for an event read from a page. */
  public abstract String positionText(ChangeEvent e);

  /** The key as JSON text, or null when the event holds it only as a tree. */
  public abstract JsonText keyText(ChangeEvent e);

  /** The before image as JSON text, or null when it is absent or only a tree. */
  public abstract JsonText beforeText(ChangeEvent e);

  /** The after image as JSON text, or null when it is absent or only a tree. */
  public abstract JsonText afterText(ChangeEvent e);
}
