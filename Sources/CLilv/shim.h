// lilv (the LV2 host library) and the LV2 extension headers Tape's host implements.
#include <lilv-0/lilv/lilv.h>
#include <lv2/atom/atom.h>
#include <lv2/buf-size/buf-size.h>
#include <lv2/core/lv2.h>
#include <lv2/options/options.h>
#include <lv2/port-props/port-props.h>
#include <lv2/resize-port/resize-port.h>
#include <lv2/state/state.h>
#include <lv2/units/units.h>
#include <lv2/urid/urid.h>
#include <lv2/worker/worker.h>

#include <semaphore.h>

// What an effect's process calls on the audio thread, declared realtime-safe for Swift's
// @_noLocks check: each is one call into the plugin (whose own realtime safety is its
// lv2:hardRTCapable promise) or a semaphore post (lock-free, async-signal-safe).

/// The plugin's run.
__attribute__((swift_attr("@_noLocks")))
static inline void tape_lv2_run(LilvInstance *instance, uint32_t frames) {
  lilv_instance_run(instance, frames);
}

/// The worker's work_response, if it has one.
__attribute__((swift_attr("@_noLocks")))
static inline void tape_lv2_work_response(
    const LV2_Worker_Interface *worker, LilvInstance *instance, uint32_t size, const void *data) {
  if (worker && worker->work_response) {
    worker->work_response(lilv_instance_get_handle(instance), size, data);
  }
}

/// The worker's end_run, if it has one.
__attribute__((swift_attr("@_noLocks")))
static inline void tape_lv2_end_run(const LV2_Worker_Interface *worker, LilvInstance *instance) {
  if (worker && worker->end_run) worker->end_run(lilv_instance_get_handle(instance));
}

/// The worker's work, for the inline worker of offline renders only (WorkerMode.inline):
/// marked for the check because process calls it in that mode, which is documented as not
/// realtime-safe; the threaded mode never reaches it on the audio thread.
__attribute__((swift_attr("@_noLocks")))
static inline void tape_lv2_work(
    const LV2_Worker_Interface *worker, LilvInstance *instance, LV2_Worker_Respond_Function respond,
    void *respond_handle, uint32_t size, const void *data) {
  if (worker && worker->work) {
    worker->work(lilv_instance_get_handle(instance), respond, respond_handle, size, data);
  }
}

/// Wakes a worker thread.
__attribute__((swift_attr("@_noLocks")))
static inline void tape_lv2_post(sem_t *semaphore) {
  sem_post(semaphore);
}
