package io.gnomon.checker.history;

/**
 * One row change that a transaction's statement made and kept (not undone by a rollback to a savepoint): it must
 * leave exactly one version in the history if the transaction commits.
 *
 * @param tbl the table's number
 * @param key the row's key
 * @param op {@code I} insert, {@code U} update, {@code D} delete (a rekey is a {@code D} of the old key and an {@code
 *     I} of the new one)
 * @param value the row's value after the change; null for a delete
 * @param opId the statement's op number
 */
public record Write(int tbl, long key, char op, Long value, long opId) {}
