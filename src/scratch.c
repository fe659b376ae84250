/*
 * scratch.c - per-thread scratch memory kept between calls. The CPU
 * histograms need tables of up to a few megabytes for each call (768 KB for
 * one 16-bit channel); taken from malloc afresh, they arrive as new pages and
 * every call pays the page faults, which on the 2-core VM cost more than the
 * counting below 1024^2 pixels. Each thread keeps one buffer per slot, grown
 * on demand up to PSI_SCRATCH_MAX_BYTES and freed when the thread exits.
 */
#include "internal.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

typedef struct scratch_slot {
    void *p;
    size_t cap;
    bool busy; /* handed out and not given back yet */
} scratch_slot;

static _Thread_local scratch_slot slots[PSI_SCRATCH_SLOTS];

static pthread_key_t exit_key;
static pthread_once_t exit_once = PTHREAD_ONCE_INIT;
static bool exit_key_made;

/* At thread exit: the exiting thread's buffers (its thread-local slots are
 * still there while key destructors run). */
static void free_slots(void *unused)
{
    (void)unused;
    for (int s = 0; s < PSI_SCRATCH_SLOTS; s++) {
        free(slots[s].p);
        slots[s] = (scratch_slot){NULL, 0, false};
    }
}

static void make_exit_key(void)
{
    exit_key_made = pthread_key_create(&exit_key, free_slots) == 0;
}

void *psi_scratch_take(psi_scratch_slot slot, size_t bytes)
{
    scratch_slot *sl = &slots[slot];
    if (bytes == 0 || bytes > PSI_SCRATCH_MAX_BYTES || sl->busy)
        return calloc(bytes ? bytes : 1, 1);
    if (sl->cap < bytes) {
        free(sl->p);
        sl->p = malloc(bytes);
        sl->cap = sl->p ? bytes : 0;
        if (!sl->p)
            return NULL;
        pthread_once(&exit_once, make_exit_key);
        if (exit_key_made) /* any non-NULL value makes the destructor run */
            pthread_setspecific(exit_key, slots);
    }
    memset(sl->p, 0, bytes);
    sl->busy = true;
    return sl->p;
}

void psi_scratch_give(psi_scratch_slot slot, void *p)
{
    scratch_slot *sl = &slots[slot];
    if (p && p == sl->p) {
        sl->busy = false;
        return;
    }
    free(p);
}
