import { ReactNode } from 'react';
import { Table, Text } from '@mantine/core';
import { usePagedList } from '../api/client';
import { MoreButton } from './bits';
import { ProblemAlert } from './ProblemAlert';

/** One column: its header (a blank one is named for screen readers by `label`) and what each row shows in it. */
export interface Column<T> {
  header: string;
  /** For a column without a header text (its buttons): what a screen reader calls it. */
  label?: string;
  cell: (row: T) => ReactNode;
  /** Addresses, recipients, file names: left to right even in the Arabic layout. */
  ltr?: boolean;
}

interface TableProps<T> {
  label: string;
  columns: Column<T>[];
  rows: T[];
  rowKey: (row: T) => string | number;
  striped?: boolean;
  withColumnBorders?: boolean;
}

/** The console's tables: named for screen readers, one header row, one row per item. */
export function DataTable<T>({ label, columns, rows, rowKey, striped, withColumnBorders }: TableProps<T>) {
  return (
    <Table aria-label={label} striped={striped} withColumnBorders={withColumnBorders}>
      <Table.Thead>
        <Table.Tr>
          {columns.map((column, index) => (
            <Table.Th key={index} aria-label={column.header === '' ? column.label : undefined}>
              {column.header}
            </Table.Th>
          ))}
        </Table.Tr>
      </Table.Thead>
      <Table.Tbody>
        {rows.map((row) => (
          <Table.Tr key={rowKey(row)}>
            {columns.map((column, index) => (
              <Table.Td key={index} dir={column.ltr ? 'ltr' : undefined}>
                {column.cell(row)}
              </Table.Td>
            ))}
          </Table.Tr>
        ))}
      </Table.Tbody>
    </Table>
  );
}

/**
 * A list paged with the API's cursors (usePagedList) as a table: why it could not load above it, its rows,
 * what `whenEmpty` says when it has none, and the button that loads the next page while there is one.
 */
export function PagedTable<T>({ list, whenEmpty, ...table }: Omit<TableProps<T>, 'rows'> & { list: ReturnType<typeof usePagedList<T>>; whenEmpty?: string }) {
  return (
    <>
      {list.error && <ProblemAlert error={list.error} />}
      <DataTable {...table} rows={list.items} />
      {whenEmpty && !list.isLoading && list.items.length === 0 && <Text>{whenEmpty}</Text>}
      <MoreButton hasMore={list.hasMore} loading={list.loadingMore} onMore={list.loadMore} />
    </>
  );
}
