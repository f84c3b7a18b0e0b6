/**
 * The backend port {@link dev.hamilock.core.store.LockStore}, HAMi's lock semantics implemented
 * once over it ({@link dev.hamilock.core.store.StoreNodeLock}) and the in-memory backend.
 */
package dev.hamilock.core.store;
