// Search in PostgreSQL (store.ts MailStore.searchMails): the plan of postgres-search.ts
// run in a transaction of its own, whose statement_timeout is the search's budget.
import type { MailStore } from '../store.js';
import { SEARCH_BUDGET_MS, searchOverBudget, toParsedSearch } from '../search-query.js';
import { query as q, type Transaction } from './postgres-connection.js';
import { M_COLUMNS, toSummary, type MailRow } from './postgres-mail-reads.js';
import { pgSearchPlan } from './postgres-search.js';

export function postgresMailSearch(transaction: Transaction, budgetMs = SEARCH_BUDGET_MS): Pick<MailStore, 'searchMails'> {
  const budget = Math.max(1, Math.floor(budgetMs));
  return {
    async searchMails(addressId, query, limit, offset) {
      const plan = pgSearchPlan(addressId, toParsedSearch(query));
      if (!plan) return { results: [], count: 0 };
      const n = plan.params.length;
      try {
        return await transaction(async (client) => {
          // The search's own bound: past it PostgreSQL cancels the statement (57014).
          await client.query(`SET LOCAL statement_timeout = ${budget}`);
          const { rows } = await q<MailRow>(
            client,
            `SELECT ${M_COLUMNS} FROM mails m WHERE ${plan.where} ORDER BY m.created_at DESC, m.id DESC LIMIT $${n + 1} OFFSET $${n + 2}`,
            [...plan.params, limit, offset],
          );
          let count = rows.length;
          if (!(offset === 0 && rows.length < limit)) count = Number((await q<{ n: string }>(client, `SELECT count(*) AS n FROM mails m WHERE ${plan.where}`, plan.params)).rows[0]!.n);
          return { results: rows.map(toSummary), count };
        });
      } catch (err) {
        if ((err as { code?: unknown }).code === '57014') throw searchOverBudget(budget);
        throw err;
      }
    },
  };
}
