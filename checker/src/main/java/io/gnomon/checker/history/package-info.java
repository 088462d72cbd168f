/**
 * The checker's history: one {@link io.gnomon.checker.history.Op} per JSON line of {@code history.jsonl}, written by
 * {@link io.gnomon.checker.history.HistoryLog}, read back as {@link io.gnomon.checker.history.History} with its
 * transactions ({@link io.gnomon.checker.history.Txn}) and the row changes they kept. Part of the checker's
 * implementation, not an API.
 */
package io.gnomon.checker.history;
