// The methods of a Store the caching store (caching-store.ts) passes to the store it wraps
// unchanged: what none of its remembered addresses or mail-set versions depend on.
import type { Store } from './store.js';

/** What the caching store itself answers: the address look-ups and every write to an address's mail. */
export type Intercepted = 'getAddress' | 'findAddress' | 'deleteAddress' | 'insertMails' | 'softDeleteMail' | 'setSeen' | 'clearMails' | 'trimMails' | 'keepReportSummary' | 'purge';

export function passedThrough(inner: Store): Omit<Store, Intercepted> {
  return {
    kind: inner.kind,
    // Passed through: nothing here changes an address or its mail.
    createAddress: (address, createdAt, opts) => inner.createAddress(address, createdAt, opts),
    // Claiming changes none of what is remembered (id, name, creation time).
    claimAddress: (address) => inner.claimAddress(address),
    listMails: (addressId, limit, offset) => inner.listMails(addressId, limit, offset),
    getMail: (addressId, uuid) => inner.getMail(addressId, uuid),
    openMail: (addressId, uuid) => inner.openMail(addressId, uuid),
    searchMails: (addressId, query, limit, offset) => inner.searchMails(addressId, query, limit, offset),
    getAttachment: (addressId, uuid, index) => inner.getAttachment(addressId, uuid, index),
    openAttachment: (addressId, uuid, index) => inner.openAttachment(addressId, uuid, index),
    addressUsage: (addressId) => inner.addressUsage(addressId),
    createSession: (id, createdAt) => inner.createSession(id, createdAt),
    getSession: (id) => inner.getSession(id),
    addSessionAddress: (sessionId, addressId, addedAt, max) => inner.addSessionAddress(sessionId, addressId, addedAt, max),
    listSessionAddresses: (sessionId) => inner.listSessionAddresses(sessionId),
    rotateSession: (oldId, newId, activeAddressId, renewedAt) => inner.rotateSession(oldId, newId, activeAddressId, renewedAt),
    deleteSession: (id) => inner.deleteSession(id),
    externalWriteMark: () => inner.externalWriteMark(),
    // The operators' admin: nothing here is remembered (an address deleted by the admin
    // goes through deleteAddress below). Blocks are cached by blocks/block-list.ts,
    // which follows blocksVersion across nodes.
    listAddresses: (contains, limit, offset) => inner.listAddresses(contains, limit, offset),
    addBlock: (block) => inner.addBlock(block),
    listBlocks: () => inner.listBlocks(),
    deleteBlock: (id) => inner.deleteBlock(id),
    blocksVersion: () => inner.blocksVersion(),
    mailsPerDay: (fromDay) => inner.mailsPerDay(fromDay),
    topSenders: (since, limit) => inner.topSenders(since, limit),
    storageUsage: () => inner.storageUsage(),
    domainMailCounts: (since, recentSince) => inner.domainMailCounts(since, recentSince),
    addressesPerDomain: () => inner.addressesPerDomain(),
    // Passwords (the mail.tm-compatible API): read at each login, never remembered.
    setAddressPassword: (addressId, hash, at) => inner.setAddressPassword(addressId, hash, at),
    getAddressPassword: (addressId) => inner.getAddressPassword(addressId),
    // A mail's kept parse outcome: read from the store each time (it is small, and rare).
    getMailHead: (addressId, uuid) => inner.getMailHead(addressId, uuid),
    keepDegradedView: (mailId, view) => inner.keepDegradedView(mailId, view),
    // Sandboxes: read at each login and session, never remembered here (sandboxes/service.ts keeps
    // what it needs). Creating one creates its address, which nothing here has remembered missing.
    putSandbox: (input) => inner.putSandbox(input),
    getSandbox: (id) => inner.getSandbox(id),
    findSandbox: (name) => inner.findSandbox(name),
    listSandboxes: () => inner.listSandboxes(),
    countSandboxes: () => inner.countSandboxes(),
    setSandboxPassword: (id, hash, at) => inner.setSandboxPassword(id, hash, at),
    setSandboxChaos: (id, chaos, at) => inner.setSandboxChaos(id, chaos, at),
    // Tags of mails (the Mailpit-compatible API): never remembered, and no response of our own API shows them.
    setMailTags: (addressId, uuids, tags) => inner.setMailTags(addressId, uuids, tags),
    mailTags: (addressId, mailIds) => inner.mailTags(addressId, mailIds),
    listTags: (addressId) => inner.listTags(addressId),
    renameTag: (addressId, from, to) => inner.renameTag(addressId, from, to),
    deleteTag: (addressId, tag) => inner.deleteTag(addressId, tag),
    // Webhooks and their outbox: nothing here is remembered, and none of it changes an
    // address or its live mail (a delivery reads a mail, deleted or not, by id).
    putWebhook: (addressId, url, secret, createdAt) => inner.putWebhook(addressId, url, secret, createdAt),
    getWebhook: (addressId) => inner.getWebhook(addressId),
    deleteWebhook: (addressId) => inner.deleteWebhook(addressId),
    claimDeliveries: (claim) => inner.claimDeliveries(claim),
    deliveriesQueued: () => inner.deliveriesQueued(),
    finishDelivery: (owner, deliveryId, attempt, release) => inner.finishDelivery(owner, deliveryId, attempt, release),
    nextDeliveryAt: (operator, after) => inner.nextDeliveryAt(operator, after),
    listWebhookAttempts: (addressId, limit) => inner.listWebhookAttempts(addressId, limit),
    pruneWebhooks: (cutoffs) => inner.pruneWebhooks(cutoffs),
    // Tombstones: read when a name is asked for, never remembered (a deletion goes through deleteAddress).
    hasTombstone: (key, since) => inner.hasTombstone(key, since),
    purgeTombstones: (opts) => inner.purgeTombstones(opts),
    // The domain pool: cached by mail/domain-pool.ts, which follows poolVersion across nodes.
    listPoolDomains: () => inner.listPoolDomains(),
    poolVersion: () => inner.poolVersion(),
    seedPoolDomains: (domains, at) => inner.seedPoolDomains(domains, at),
    addPoolDomain: (domain) => inner.addPoolDomain(domain),
    updatePoolDomain: (domain, change) => inner.updatePoolDomain(domain, change),
    deletePoolDomain: (domain) => inner.deletePoolDomain(domain),
    // Refusal counts per hour: counters only the admin reads, never remembered.
    addRefusals: (rows) => inner.addRefusals(rows),
    listRefusals: (since) => inner.listRefusals(since),
    purgeRefusals: (before) => inner.purgeRefusals(before),
    ping: () => inner.ping(),
    close: () => inner.close(),
  };
}
