/**
 * The change feed: the versions of tracked tables in commit order, cut into batches by ticks, read in pages by named
 * consumers whose positions live in the database.
 *
 * <p>{@link io.gnomon.feed.Feed} is the entry point: register a consumer, {@link io.gnomon.feed.Feed#poll poll} pages
 * of {@link io.gnomon.feed.ChangeEvent}s and {@link io.gnomon.feed.Feed#ack acknowledge} them, or let a {@link
 * io.gnomon.feed.FeedRunner} do it page by page. Events serialise with Jackson into an envelope shaped like
 * Debezium's. See {@code docs/feed.md} for the guarantees.
 */
package io.gnomon.feed;
