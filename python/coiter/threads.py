"""coiter's thread pool as threadpoolctl sees it.

With threadpoolctl installed, ``threadpoolctl.threadpool_info()`` lists coiter (user_api
"coiter") next to BLAS and OpenMP, and ``threadpool_limits(1)`` or
``threadpool_limits(1, user_api="coiter")`` limit it as they limit the others: what
``ct.set_num_threads`` does. The library is recognized by a symbol only coiter's core exports
(``coiter_thread_pool``, src/bindings/module.cpp), not by its file name, which other packages'
``_core`` modules share.
"""

from . import _core


def _register():
    try:
        import threadpoolctl
    except ImportError:
        return  # optional: nothing to register with

    class CoiterController(threadpoolctl.LibController):
        user_api = "coiter"
        internal_api = "coiter"
        filename_prefixes = ("_core",)
        check_symbols = ("coiter_thread_pool",)

        def get_num_threads(self):
            return _core.get_num_threads()

        def set_num_threads(self, num_threads):
            _core.set_num_threads(int(num_threads))

        def get_version(self):
            return _core.__version__

    threadpoolctl.register(CoiterController)


_register()
