/**
 * The backend port {@link dev.hamilock.core.store.LockStore} (four atomic operations on one value
 * per node and key), HAMi's lock semantics implemented once over it
 * ({@link dev.hamilock.core.store.StoreNodeLock}), and the in-memory backend
 * ({@link dev.hamilock.core.store.InMemoryLockStore}, {@link dev.hamilock.core.store.InMemoryNodeLock}).
 */
package dev.hamilock.core.store;
