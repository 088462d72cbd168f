-- Roles that may change the catalog: create, rename and drop branches, merge, declare strategies, rules and
-- resolutions, register and acknowledge feed consumers. The catalog tables grant only SELECT to other roles; these
-- two functions give (and take back) exactly the writes those functions make, so an application role needs neither
-- superuser nor the catalog's ownership. Writing to a tracked table, on main or on a branch, still takes the table's
-- own grants.

-- The catalog objects those functions write, with the privileges they need on each.
create or replace function gnomon.catalog_writes() returns table (object_kind text, object_name text, privileges text)
language sql stable as $$
  values ('table', 'gnomon.branch', 'insert, update, delete'),
         ('table', 'gnomon.scratch_alive', 'insert, update, delete'),
         ('table', 'gnomon.consumer', 'insert, update, delete'),
         ('table', 'gnomon.feed_batch', 'insert, delete'),
         ('table', 'gnomon.merge_strategy', 'insert, update, delete'),
         ('table', 'gnomon.merge_rule', 'insert, update, delete'),
         ('table', 'gnomon.merge', 'insert, update, delete'),
         ('table', 'gnomon.merge_conflict', 'insert, update, delete'),
         ('table', 'gnomon.merge_resolution', 'insert, update, delete'),
         ('sequence', 'gnomon.branch_seq', 'usage'),
         ('sequence', pg_get_serial_sequence('gnomon.merge', 'merge_id'), 'usage'),
         ('function', 'gnomon.refresh_branch_objects()', 'execute'),
         ('function', 'gnomon.branch_rows_drop(integer[])', 'execute')
$$;
comment on function gnomon.catalog_writes() is
  'The catalog tables, sequences and internal functions that branch, merge and feed functions write, with the privileges gnomon.grant_catalog_writes gives on each.';

create or replace function gnomon.grant_catalog_writes(role_name text, do_grant boolean default true) returns integer
language plpgsql as $$
declare
  w record;
  n integer := 0;
begin
  if role_name is null or role_name = '' then
    raise exception using errcode = 'GN021', message = 'no role named: role_name is null or empty',
      hint = 'Name the role that should create branches, merge and consume the feed, e.g. gnomon.grant_catalog_writes(''app'').';
  end if;
  if not exists (select 1 from pg_roles r where r.rolname = role_name) then
    raise exception using errcode = 'GN021', message = format('role %I does not exist', role_name),
      hint = 'Create it first (CREATE ROLE), or name an existing role (role names are case-sensitive).';
  end if;
  if not (select rolsuper from pg_roles where rolname = current_user)
     and not pg_has_role(current_user, (select c.relowner from pg_class c where c.oid = 'gnomon.branch'::regclass), 'MEMBER') then
    raise exception using errcode = '42501',
      message = format('role %I may not %s the catalog''s writes: only the catalog''s owner (%s) or a superuser may',
                       current_user, case when do_grant then 'grant' else 'revoke' end,
                       (select c.relowner::regrole from pg_class c where c.oid = 'gnomon.branch'::regclass)),
      hint = 'Run it as the role that installed Gnomon.';
  end if;
  for w in select * from gnomon.catalog_writes() loop
    execute format(case when do_grant then 'grant %s on %s %s to %I' else 'revoke %s on %s %s from %I' end,
                   w.privileges, w.object_kind, w.object_name, role_name);
    n := n + 1;
  end loop;
  return n;
end $$;
comment on function gnomon.grant_catalog_writes(text, boolean) is
  'Lets a role create, rename and drop branches, merge, declare strategies and resolutions, and register, acknowledge and unregister feed consumers (do_grant => false takes it back); returns the number of objects granted on.';
