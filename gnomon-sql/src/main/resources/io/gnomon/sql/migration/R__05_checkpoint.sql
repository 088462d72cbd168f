-- Checkpoints: a materialised state of a tracked table, so reads far in the past roll back from it, not from now.
create or replace function gnomon.checkpoint(table_name text) returns bigint
language plpgsql as $$
declare
  tt gnomon.tracked_table := gnomon.tracked(table_name);
  cols text;
  id bigint;
  n bigint;
begin
  select string_agg(format('%I', c->>'name'), ', ' order by (c->>'attnum')::int) into cols
    from jsonb_array_elements(tt.columns) c;
  -- one statement: the catalog row's snapshot is exactly the snapshot the rows were read with
  execute format($q$
    with cp as (insert into gnomon.checkpoint (table_id, snapshot, snapshot_xmin)
                values (%1$s, pg_current_snapshot(), pg_snapshot_xmin(pg_current_snapshot()))
                returning checkpoint_id),
         ins as (insert into gnomon_t.%2$I (g_cp, %3$s) select cp.checkpoint_id, %4$s from %5$I.%6$I t, cp returning 1)
    select (select checkpoint_id from cp), (select count(*) from ins)$q$,
    tt.table_id, tt.checkpoint_table, cols,
    (select string_agg(format('t.%I', c->>'name'), ', ' order by (c->>'attnum')::int) from jsonb_array_elements(tt.columns) c),
    tt.schema_name, tt.table_name) into id, n;
  update gnomon.checkpoint set row_count = n where checkpoint_id = id;
  perform gnomon.install_as_of(tt.table_id); -- the as-of functions know their checkpoints
  return id;
end $$;
comment on function gnomon.checkpoint(text) is
  'Materialises the table''s current state; as-of reads older than it then roll back from it instead of from the live table. Returns the checkpoint id.';

create or replace function gnomon.drop_checkpoint(checkpoint_id bigint) returns void
language plpgsql as $$
declare
  tt gnomon.tracked_table;
begin
  select t.* into tt from gnomon.tracked_table t join gnomon.checkpoint c using (table_id) where c.checkpoint_id = drop_checkpoint.checkpoint_id;
  if not found then
    raise exception using errcode = 'GN021', message = format('checkpoint %s does not exist', checkpoint_id),
      hint = 'List checkpoints with: select * from gnomon.checkpoint;';
  end if;
  execute format('delete from gnomon_t.%I where g_cp = $1', tt.checkpoint_table) using checkpoint_id;
  delete from gnomon.checkpoint c where c.checkpoint_id = drop_checkpoint.checkpoint_id;
  perform gnomon.install_as_of(tt.table_id);
end $$;
comment on function gnomon.drop_checkpoint(bigint) is 'Drops a checkpoint and its rows.';
