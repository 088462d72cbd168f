package io.gnomon;

/**
 * What a branch holds for one tracked table ({@code gnomon.branch_describe}).
 *
 * @param table the table's qualified name
 * @param rowsWritten keys written on the branch (deleted ones included)
 * @param rowsDeleted keys deleted on the branch
 * @param versions versions of the branch's rows (one per write)
 * @param bytes bytes the rows and their versions take
 */
public record BranchTableStats(String table, long rowsWritten, long rowsDeleted, long versions, long bytes) {}
